// A first integration, start to finish, against a running server:
//
//   API_KEY=fpk_… npm run example             (BASE_URL defaults to http://localhost:4000)
//
// API_KEY is the key `npm start` printed on its first run (or one from `npm run client:create`).
// It creates a user, opens an NGN virtual account, has the sandbox send money to it, watches the
// deposit over a GraphQL subscription until it is COMPLETED, and prints the user's ledger and balances.
// Then it converts some USDC to USD, pays with the user's card: an authorization holds funds
// (available falls, posted does not) until it is captured (a card debit is posted), and prints the
// balances at each step.
import { createClient } from "graphql-ws";
import WebSocket from "ws";

const BASE_URL = (process.env.BASE_URL ?? "http://localhost:4000").replace(/\/$/, "");
const API_KEY = process.env.API_KEY ?? "";
const DEPOSIT_TIMEOUT_MS = 15_000;

type User = { id: string; email: string };
type VirtualAccount = { accountNumber: string; bankName: string; destinationAsset: string; destinationAddress: string };
type Deposit = { id: string; status: string; amount: number | string; currency: string };
type LedgerEntry = { type: string; currency: string; amount: number; balanceAfter: number; referenceId: string | null };
type Balances = { userId: string; balances: { currency: string; posted: number; pending: number; available: number }[] };
type CardAuthorization = { id: string; amount: number; merchant: string; status: string; declineReason: string | null; capturedAmount: number | null };

/** An answer that is not 2xx, with its status. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** One REST call with the API key; anything but a 2xx stops the example with the server's answer. */
async function rest<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${BASE_URL}${path}`, {
    method,
    headers: { "x-api-key": API_KEY, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const payload = await response.json();
  if (!response.ok) throw new ApiError(response.status, `${method} ${path} answered ${response.status}: ${JSON.stringify(payload)}`);
  return payload as T;
}

/** One GraphQL query over HTTP; GraphQL answers errors beside (or instead of) data. */
async function graphql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const { data, errors } = await rest<{ data?: T; errors?: { message: string }[] }>("POST", "/graphql", { query, variables });
  if (errors?.length) throw new Error(`GraphQL: ${errors.map((e) => e.message).join("; ")}`);
  return data!;
}

async function main() {
  if (!API_KEY) {
    console.error("Set API_KEY: the key `npm start` printed on its first run, or one from `npm run client:create`.");
    process.exit(2);
  }

  // 1. A user: an end customer of your business.
  const user = await rest<User>("POST", "/v1/user", {
    email: `ada-${Date.now()}@example.com`,
    firstName: "Ada",
    lastName: "Lovelace",
    phoneNumber: "+2348031234567",
    dob: "1990-05-17",
  });
  console.log(`user         ${user.id} <${user.email}>`);

  // 2. An NGN virtual bank account: naira paid into it become USDC in the user's wallet.
  const account = await rest<VirtualAccount>("POST", "/v1/virtual-account/ngn", { userId: user.id });
  console.log(`NGN account  ${account.accountNumber} at ${account.bankName} → ${account.destinationAsset} to ${account.destinationAddress}`);

  // 3. Live deposit updates over graphql-ws; the credentials go in connection_init. The client
  // connects lazily and the protocol does not acknowledge a subscription, so we take the event
  // cursor first and subscribe from it: whatever happens after this line is replayed, never missed.
  const { cursor } = await rest<{ cursor: string | null }>("GET", "/v1/events/cursor");
  const socket = createClient({
    url: `${BASE_URL.replace(/^http/, "ws")}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { "x-api-key": API_KEY },
  });
  const updates = socket.iterate<{ depositUpdated: Deposit }>({
    query: `subscription ($userId: ID, $after: ID) { depositUpdated(userId: $userId, after: $after) { id status amount currency } }`,
    variables: { userId: user.id, after: cursor },
  });
  const first = updates.next();

  try {
    // 4. The sandbox plays the bank: 50,000 NGN arrive (PENDING), then we settle them (COMPLETED).
    const deposit = await rest<Deposit>("POST", "/v1/sandbox/deposits", { userId: user.id, currency: "NGN", amount: 50000 });
    console.log(`deposit      ${deposit.id} ${deposit.amount} ${deposit.currency} ${deposit.status}`);
    await withTimeout(watchUntilCompleted(first, updates, deposit.id), DEPOSIT_TIMEOUT_MS);
  } finally {
    await updates.return?.();
    await socket.dispose();
  }

  // 5. Where the money went: the ledger (REST, newest first) and the balances (GraphQL, exact decimals).
  const ledger = await rest<LedgerEntry[]>("GET", `/v1/transactions/ledger/${user.id}`);
  console.log("\nledger");
  console.table(ledger.reverse().map(({ type, currency, amount, balanceAfter, referenceId }) => ({ type, currency, amount, balanceAfter, referenceId })));
  const { user: withBalances } = await graphql<{ user: { balances: { currency: string; posted: string; pending: string; available: string }[] } }>(
    `query ($id: ID!) { user(id: $id) { balances { currency posted pending available } } }`,
    { id: user.id },
  );
  console.log("balances");
  console.table(withBalances.balances);

  // 6. Card spending is in USD: convert some USDC, and issue the user's USD card.
  await rest("POST", "/v1/conversion", { userId: user.id, from: "USDC", to: "USD", amount: 20 });
  await rest("GET", `/v1/virtual-cards/${user.id}`);

  // 7. A hotel authorizes 12.50 on the card: the amount is held (available falls, posted does not)...
  const hold = await rest<CardAuthorization>("POST", "/v1/sandbox/card-authorizations", { userId: user.id, amount: 12.5, merchant: "Hotel Sandbox" });
  if (hold.status !== "PENDING") throw new Error(`the authorization was ${hold.status} (${hold.declineReason})`);
  console.log(`\nauthorization ${hold.id} ${hold.amount} USD at ${hold.merchant}: ${hold.status}`);
  await printUsdBalances(user.id, "while held");

  // 8. ...and captures 10.00 at check-out: the hold is released and a 10.00 card debit posted.
  const captured = await rest<CardAuthorization>("POST", `/v1/sandbox/card-authorizations/${hold.id}/capture`, { amount: 10 });
  console.log(`captured     ${captured.capturedAmount} USD: ${captured.status}`);
  await printUsdBalances(user.id, "after capture");
}

/** The user's USD row of GET /v1/balances/{userId}: posted (the ledger), pending and available. */
async function printUsdBalances(userId: string, when: string) {
  const { balances } = await rest<Balances>("GET", `/v1/balances/${userId}`);
  const usd = balances.find((row) => row.currency === "USD");
  console.log(`USD ${when.padEnd(13)} posted ${usd?.posted}, pending ${usd?.pending}, available ${usd?.available}`);
}

/**
 * Reads updates until the deposit is COMPLETED. On PENDING it asks the sandbox to settle at once
 * (left alone, the sandbox settles it after SANDBOX_SETTLE_MS).
 */
async function watchUntilCompleted(
  first: Promise<IteratorResult<{ data?: { depositUpdated: Deposit } | null }>>,
  updates: AsyncIterator<{ data?: { depositUpdated: Deposit } | null }>,
  depositId: string,
): Promise<Deposit> {
  for (let next = first; ; next = updates.next()) {
    const { done, value } = await next;
    if (done) throw new Error("the subscription ended before the deposit completed");
    const update = value.data?.depositUpdated;
    if (!update || update.id !== depositId) continue;
    console.log(`update       ${update.id} ${update.status} (over graphql-ws)`);
    if (update.status === "COMPLETED") return update;
    if (update.status === "FAILED") throw new Error("the deposit failed");
    // The sandbox's own timer may settle it first (a busy machine): a 409 then, and the COMPLETED update follows.
    await rest("POST", `/v1/sandbox/deposits/${depositId}/complete`).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    });
  }
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no COMPLETED update within ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`quickstart failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
