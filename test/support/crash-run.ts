import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { patient } from "./patience.js";
import pg from "pg";
import { Decimal } from "decimal.js";
import { EventIds } from "../../src/events/ids.js";
import { startCrashChain, type ChainFigures, type ChainRequest, type CrashChain } from "./crash-chain.js";
import { userInput } from "./http.js";
import { call, createScratchClient, createScratchDatabase, scratchServerEnv, startScratchServer, type Answer, type ScratchServer } from "./scratch-server.js";
import { SHARED_SECRETS } from "./server-process.js";

/**
 * Crash safety, end to end: the real server as its own process on its own PostgreSQL database, mixed
 * money traffic (sandbox deposits that settle by themselves, USDC withdrawals, USDC→EUR conversions)
 * with an Idempotency-Key on every request, and webhook deliveries to two endpoints on a loopback
 * receiver that holds each send a while; with `chain`, also USDC withdrawals sent on a live BASE (an
 * anvil, see crash-chain.ts), some of them while the token is paused. The server is killed with SIGKILL at random moments (the first kill while a
 * send is held), restarted, and finally every request is retried under its key. What must hold is
 * listed in `check`; each breach becomes one line of `problems`.
 */
export type CrashRunOptions = {
  /** An existing PostgreSQL database URL: the run creates its own database beside it and drops it at the end. */
  databaseUrl: string;
  kills: number;
  /** Traffic between a start and the next kill: a random time up to this long. */
  maxRunMs: number;
  /** Concurrent clients sending requests. */
  senders: number;
  users: number;
  /** USDC withdrawals on a live BASE (an anvil) in the mix, and the token's logs checked at the end. */
  chain?: boolean;
  log?: (line: string) => void;
};

export type CrashReport = {
  kills: number;
  requests: number;
  /** Requests whose first answer was lost to a kill (their outcome was unknown until the retry). */
  unanswered: number;
  retried: number;
  events: number;
  /** Sends the receiver saw cut off by a kill and then got again under the same webhook-id. */
  cutOffThenResent: number;
  /** (event, endpoint) pairs that must be delivered: every event written once the endpoints existed, to each. */
  deliveryPairs: number;
  /** Pairs never answered 200 by the receiver. */
  undelivered: number;
  /** Deliveries recorded FAILED without ever being sent (attempt 0). */
  failedUnsent: number;
  /** Answers with a 5xx status, first answers and retries (each is also a problem). */
  serverErrorAnswers: number;
  /** From an event's creation to the arrival of the send the receiver answered, over every delivered pair. */
  deliveryDelayMs: { p50: number; p99: number; max: number };
  problems: string[];
  /** Error lines the server logged (context for the problems). */
  serverErrors: string[];
  /** With `chain`: the withdrawals sent on chain and the token's transfers. */
  chain?: ChainFigures;
};

type Operation = {
  key: string;
  kind: "deposit" | "withdrawal" | "conversion";
  userId: string;
  amount: string;
  path: string;
  body: Record<string, unknown>;
  /** A withdrawal sent on chain: where it goes. */
  onChain?: ChainRequest;
};

const USDC_ADDRESS = "0x71C7656EC7ab88b098defB751B7401B5f6d8976F";
const HOLD_MS = 300;
const ENDPOINTS = 2;

export async function runCrashScenario(options: CrashRunOptions): Promise<CrashReport> {
  const started = Date.now();
  const log = (line: string) => options.log?.(`${((Date.now() - started) / 1000).toFixed(1)}s ${line}`);
  const database = await createScratchDatabase(options.databaseUrl, "crash");
  const receiver = await startReceiver();
  const dataDir = mkdtempSync(join(tmpdir(), "fintech-crash-run-"));
  const chain: CrashChain | undefined = options.chain ? await startCrashChain() : undefined;
  const env = scratchServerEnv(database.url, dataDir, {
    ...chain?.env,
    SANDBOX_SETTLE_MS: "400",
    RATE_LIMIT_PER_MINUTE: "1000000",
    WEBHOOK_DELIVERY: "on",
    WEBHOOK_TIMEOUT_MS: "2000",
    WEBHOOK_LEASE_MARGIN_MS: "1000",
    WEBHOOK_RETRY_SCHEDULE: "200ms,500ms,1s,2s,2s,2s,2s,2s",
  });

  let server: ScratchServer | undefined;
  const serverErrors: string[] = [];
  /** Every 5xx the server answered (a kill loses answers, it never makes one): each is a problem. */
  const serverErrorAnswers: string[] = [];
  const startServer = () => startScratchServer(env, serverErrors);
  try {
    log(`database ${database.url}`);
    const apiKey = await createScratchClient(database.url);
    log("client created");
    const headers = { "x-api-key": apiKey, "content-type": "application/json" };
    server = await startServer();
    for (let i = 0; i < ENDPOINTS; i++) {
      const endpoint = await call(server.url, "POST", "/v1/webhook-endpoints", headers, { url: `${receiver.url}/${i}` });
      if (endpoint.status !== 201 && endpoint.status !== 200) throw new Error(`endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
    }
    const users: string[] = [];
    for (let i = 0; i < options.users; i++) {
      const user = await call(server.url, "POST", "/v1/user", headers, userInput());
      if (user.status !== 201) throw new Error(`user: ${user.status} ${JSON.stringify(user.body)}`);
      users.push(user.body.id);
    }

    log("set up: endpoint and users");
    const operations: Operation[] = [];
    const firstAnswers = new Map<string, Answer>();
    let sequence = 0;
    const nextOperation = (): Operation => {
      const userId = users[sequence % users.length];
      const key = `crash-${process.pid}-${sequence++}`;
      const pick = Math.random();
      if (pick < 0.4) return { key, kind: "deposit", userId, amount: "5", path: "/v1/sandbox/deposits", body: { userId, currency: "USDC", amount: "5" } };
      if (chain && pick < 0.55) {
        const onChain = { destination: chain.newDestination(), amount: "1.25" };
        const body = { userId, amount: "1.25", walletAddress: onChain.destination, network: "BASE", chainId: chain.chainId };
        return { key, kind: "withdrawal", userId, amount: "1.25", path: "/v1/withdrawals/usdc", body, onChain };
      }
      if (pick < 0.7) {
        return { key, kind: "withdrawal", userId, amount: "1.25", path: "/v1/withdrawals/usdc", body: { userId, amount: "1.25", walletAddress: USDC_ADDRESS, network: "ETHEREUM", chainId: 1 } };
      }
      return { key, kind: "conversion", userId, amount: "2", path: "/v1/conversion", body: { userId, from: "USDC", to: "EUR", amount: "2" } };
    };

    for (let kill = 0; kill < options.kills; kill++) {
      const url = server.url;
      // The middle round runs with the token paused: the sends signed then are refused (FAILED, reversed).
      const paused = chain !== undefined && kill === Math.floor(options.kills / 2);
      if (paused) await chain.setPaused(true);
      let sending = true;
      let answered!: () => void;
      const firstAnswer = new Promise<void>((resolve) => (answered = resolve));
      const senders = Array.from({ length: options.senders }, async () => {
        while (sending) {
          const operation = nextOperation();
          operations.push(operation);
          const answer = await call(url, "POST", operation.path, { ...headers, "idempotency-key": operation.key }, operation.body).catch(() => undefined);
          if (answer && isServerError(answer)) serverErrorAnswers.push(`${operation.path} ${answer.status} ${JSON.stringify(answer.body)}`);
          if (answer) firstAnswers.set(operation.key, answer);
          if (answer) answered();
        }
      });
      // The kill comes at a random moment once the new process answers (a cold start takes seconds here).
      await Promise.race([firstAnswer, sleep(15_000)]);
      // The first kill lands while the receiver holds a send, so at least one send is cut off.
      if (kill === 0) await receiver.holding(10_000);
      else await sleep(1000 + Math.random() * options.maxRunMs);
      server.child.kill("SIGKILL");
      await server.exited;
      if (paused) await chain.setPaused(false);
      sending = false;
      await Promise.all(senders);
      log(`kill ${kill + 1}: ${operations.length} requests so far, ${operations.length - firstAnswers.size} without an answer`);
      server = await startServer();
    }

    log(`retrying ${operations.length} requests`);
    // Every request again, under its key; then once more, which must replay the retry.
    const retries = new Map<string, Answer>();
    const problems: string[] = [];
    await forEachLimited(operations, 8, async (operation) => {
      const keyed = { ...headers, "idempotency-key": operation.key };
      const retry = await call(server!.url, "POST", operation.path, keyed, operation.body);
      const again = await call(server!.url, "POST", operation.path, keyed, operation.body);
      retries.set(operation.key, retry);
      for (const answer of [retry, again]) if (isServerError(answer)) serverErrorAnswers.push(`retry of ${operation.path} ${answer.status} ${JSON.stringify(answer.body)}`);
      const first = firstAnswers.get(operation.key);
      if (retry.status === 409) problems.push(`key ${operation.key} is stuck: 409 ${JSON.stringify(retry.body)}`);
      if (retry.body?.code === "INTERNAL" || retry.body?.code === "SERVICE_UNAVAILABLE") problems.push(`key ${operation.key}: the retry failed ${JSON.stringify(retry.body)}`);
      if (first && (!retry.replayed || JSON.stringify(retry.body) !== JSON.stringify(first.body) || retry.status !== first.status)) {
        problems.push(`key ${operation.key}: the retry ${JSON.stringify(retry)} is not the first answer ${JSON.stringify(first)}`);
      }
      if (!again.replayed || JSON.stringify(again.body) !== JSON.stringify(retry.body)) {
        problems.push(`key ${operation.key}: the second retry ${JSON.stringify(again)} does not replay the first ${JSON.stringify(retry)}`);
      }
    });

    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      log("waiting for deposits to settle");
      await waitFor(async () => Number((await db.query(`SELECT count(*) FROM deposits WHERE status = 'PENDING'`)).rows[0].count) === 0, 30_000);
      if (chain) {
        log("mining until every send on chain is confirmed or failed");
        await chain.settle(db, 120_000);
      }
      log("checking money, then waiting for deliveries");
      problems.push(...(await checkMoney(db, server.url, headers, operations, retries)));
      const onChain = chain ? await chain.check(db, chainRequests(operations, retries)) : undefined;
      if (onChain) {
        log(`on chain: ${JSON.stringify(onChain.figures)}`);
        problems.push(...onChain.problems);
        if (onChain.figures.failed === 0) problems.push("chain: no withdrawal failed while the token was paused");
      }
      problems.push(...serverErrorAnswers.map((answer) => `answered a 5xx: ${answer}`));
      const delivered = await waitForDeliveries(db, receiver, 60_000);
      log(`${delivered.pairs - delivered.undelivered} of ${delivered.pairs} (event, endpoint) pairs delivered; ${delivered.failedUnsent} failed unsent`);
      problems.push(...delivered.problems);
      const cutOff = await checkCutOffSends(db, receiver);
      problems.push(...cutOff.problems);
      return {
        kills: options.kills,
        requests: operations.length,
        unanswered: operations.length - firstAnswers.size,
        retried: retries.size,
        events: delivered.events,
        cutOffThenResent: cutOff.resent,
        deliveryPairs: delivered.pairs,
        undelivered: delivered.undelivered,
        failedUnsent: delivered.failedUnsent,
        serverErrorAnswers: serverErrorAnswers.length,
        deliveryDelayMs: delivered.delayMs,
        problems,
        serverErrors: serverErrors.splice(0),
        chain: onChain?.figures,
      };
    } finally {
      await db.end();
    }
  } finally {
    if (server) {
      server.child.kill("SIGKILL");
      await server.exited;
    }
    await receiver.close();
    await chain?.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The withdrawals asked for on chain, with the reference of those the final answer created. */
function chainRequests(operations: Operation[], answers: Map<string, Answer>): ChainRequest[] {
  return operations.flatMap((op) => {
    if (!op.onChain) return [];
    const answer = answers.get(op.key);
    return [{ ...op.onChain, reference: answer && answer.status < 300 ? String(answer.body.reference) : undefined }];
  });
}

/**
 * Money: each effect belongs to a key whose answer shows it (nothing moved without an answer, nothing
 * moved twice), every deposit settled once, each user's balances are exactly what the answered
 * operations add up to, and every ledger verifies.
 */
async function checkMoney(db: pg.Client, url: string, headers: Record<string, string>, operations: Operation[], answers: Map<string, Answer>): Promise<string[]> {
  const problems: string[] = [];
  const succeeded = (kind: Operation["kind"]) => operations.filter((op) => op.kind === kind && (answers.get(op.key)?.status ?? 500) < 300);
  const sameSet = (what: string, answered: string[], stored: string[]) => {
    const a = [...answered].sort();
    const s = [...stored].sort();
    if (JSON.stringify(a) !== JSON.stringify(s)) problems.push(`${what}: answered ${a.length}, stored ${s.length} (${a.filter((x) => !s.includes(x)).slice(0, 3)} / ${s.filter((x) => !a.includes(x)).slice(0, 3)})`);
  };
  const ids = (kind: Operation["kind"], field: string) => succeeded(kind).map((op) => String(answers.get(op.key)!.body[field]));
  sameSet("withdrawals", ids("withdrawal", "reference"), (await db.query(`SELECT reference FROM withdrawals`)).rows.map((r) => r.reference));
  sameSet("conversions", ids("conversion", "id"), (await db.query(`SELECT id FROM conversions`)).rows.map((r) => r.id));
  sameSet("deposits", ids("deposit", "id"), (await db.query(`SELECT id FROM deposits`)).rows.map((r) => r.id));
  const settledTwice = await db.query(`SELECT "referenceId" FROM ledger_entries WHERE type = 'DEPOSIT' GROUP BY "referenceId", "accountId" HAVING count(*) > 1`);
  if (settledTwice.rowCount) problems.push(`deposits settled twice: ${settledTwice.rows.map((r) => r.referenceId).join(", ")}`);
  const open = await db.query(`SELECT count(*) FROM deposits WHERE status <> 'COMPLETED'`);
  if (Number(open.rows[0].count)) problems.push(`${open.rows[0].count} deposits did not complete`);
  // A withdrawal refused on chain came back (WITHDRAWAL_REVERSAL): it takes nothing from the balance.
  const failed = new Set((await db.query(`SELECT reference FROM withdrawals WHERE status = 'FAILED'`)).rows.map((r) => r.reference as string));
  const kept = (op: Operation) => !failed.has(String(answers.get(op.key)!.body.reference));

  for (const userId of new Set(operations.map((op) => op.userId))) {
    const mine = (kind: Operation["kind"]) => succeeded(kind).filter((op) => op.userId === userId);
    const sum = (list: Operation[], pick: (op: Operation) => Decimal.Value) => list.reduce((total, op) => total.plus(pick(op)), new Decimal(0));
    const usdc = sum(mine("deposit"), (op) => op.amount).minus(sum(mine("withdrawal").filter(kept), (op) => op.amount)).minus(sum(mine("conversion"), (op) => op.amount));
    const eur = sum(mine("conversion"), (op) => answers.get(op.key)!.body.convertedAmount);
    const balances = await call(url, "POST", "/graphql", headers, { query: `query ($id: ID!) { user(id: $id) { balances { currency balance } } }`, variables: { id: userId } });
    const held = Object.fromEntries((balances.body.data?.user?.balances ?? []).map((b: { currency: string; balance: string }) => [b.currency, new Decimal(b.balance)]));
    if (!(held.USDC ?? new Decimal(0)).equals(usdc)) problems.push(`user ${userId}: USDC balance ${held.USDC} but the answers add up to ${usdc}`);
    if (!(held.EUR ?? new Decimal(0)).equals(eur)) problems.push(`user ${userId}: EUR balance ${held.EUR} but the answers add up to ${eur}`);
    const verified = await call(url, "GET", `/v1/transactions/ledger/${userId}/verify`, headers);
    if (verified.body?.valid !== true) problems.push(`user ${userId}: the ledger does not verify ${JSON.stringify(verified.body)}`);
  }
  return problems;
}

/**
 * The log's id of an id the client saw: clients see each event's id encrypted under a key of their
 * own (src/events/ids.ts), derived from the server's ENCRYPTION_KEY; the database holds the log's.
 */
async function eventIdsOf(db: pg.Client) {
  const ids = new EventIds(Buffer.from(SHARED_SECRETS.ENCRYPTION_KEY, "hex"));
  const clientId = (await db.query(`SELECT id FROM clients LIMIT 1`)).rows[0].id as string;
  return { logId: (visible: string) => ids.logId(clientId, visible) ?? visible };
}

/**
 * Every event written once the endpoints existed reaches each endpoint at least once (the receiver
 * answers 200 to everything it does not lose to a kill), and no delivery is recorded FAILED without
 * being sent (attempt 0): each breach is a problem. Also measures each pair's delivery delay.
 */
async function waitForDeliveries(db: pg.Client, receiver: Receiver, timeoutMs: number) {
  const ids = await eventIdsOf(db);
  const endpoints = (await db.query(`SELECT id, url FROM webhook_endpoints`)).rows.map((r) => ({ id: r.id as string, path: new URL(r.url as string).pathname }));
  // The client's first events (its API key) came before its endpoints existed.
  const events = async () =>
    (await db.query(`SELECT id, "createdAt" FROM events WHERE "createdAt" >= (SELECT max("createdAt") FROM webhook_endpoints)`)).rows.map((r) => ({
      id: r.id as string,
      createdAt: (r.createdAt as Date).getTime(),
    }));
  const answeredAt = () => {
    const byPair = new Map<string, number>();
    for (const [pair, at] of receiver.answered) {
      const [path, visible] = pair.split(" ");
      byPair.set(`${path} ${ids.logId(visible)}`, at);
    }
    return byPair;
  };
  const missing = async () => {
    const answered = answeredAt();
    return (await events()).flatMap((event) => endpoints.filter((endpoint) => !answered.has(`${endpoint.path} ${event.id}`)).map((endpoint) => ({ eventId: event.id, endpointId: endpoint.id })));
  };
  await waitFor(async () => (await missing()).length === 0, timeoutMs);
  const left = await missing();
  const failedUnsent = Number((await db.query(`SELECT count(*) FROM webhook_delivery_attempts WHERE attempt = 0`)).rows[0].count);
  const states = left.length
    ? (await db.query(`SELECT "eventId", "endpointId", state, attempts, "nextAttemptAt", "leaseId" FROM webhook_deliveries WHERE "eventId" = ANY($1)`, [left.slice(0, 3).map((pair) => pair.eventId)])).rows
    : [];
  const answered = answeredAt();
  const all = await events();
  const delays = all
    .flatMap((event) => endpoints.map((endpoint) => answered.get(`${endpoint.path} ${event.id}`)).filter((at): at is number => at !== undefined).map((at) => at - event.createdAt))
    .sort((a, b) => a - b);
  const percentile = (p: number) => (delays.length ? delays[Math.min(delays.length - 1, Math.ceil((p / 100) * delays.length) - 1)] : 0);
  const problems: string[] = [];
  if (left.length) problems.push(`${left.length} (event, endpoint) pairs never reached their endpoint: ${JSON.stringify(states)}`);
  if (failedUnsent) problems.push(`${failedUnsent} deliveries were recorded FAILED without being sent (attempt 0)`);
  return {
    events: all.length,
    pairs: all.length * endpoints.length,
    undelivered: left.length,
    failedUnsent,
    delayMs: { p50: percentile(50), p99: percentile(99), max: delays.at(-1) ?? 0 },
    problems,
  };
}

/**
 * A send cut off by a kill (the receiver held it, and its connection closed before the answer) was
 * sent again under the same webhook-id, and the attempt log shows the retry: its attempt number
 * counts the lost attempt, which left no row of its own.
 */
async function checkCutOffSends(db: pg.Client, receiver: Receiver) {
  const { logId } = await eventIdsOf(db);
  const endpointOf = new Map((await db.query(`SELECT id, url FROM webhook_endpoints`)).rows.map((r) => [new URL(r.url as string).pathname, r.id as string]));
  const problems: string[] = [];
  let resent = 0;
  for (const pair of receiver.cutOff) {
    if (!receiver.answered.has(pair)) {
      problems.push(`the send of ${pair} cut off by a kill was not sent again`);
      continue;
    }
    resent++;
    const [path, id] = pair.split(" ");
    const attempts = (await db.query(`SELECT attempt, succeeded FROM webhook_delivery_attempts WHERE "eventId" = $1 AND "endpointId" = $2 ORDER BY attempt`, [logId(id), endpointOf.get(path)])).rows;
    const success = attempts.find((a) => a.succeeded);
    if (!success || success.attempt < 2) problems.push(`${pair}: the attempt log does not show the resend after the cut-off (${JSON.stringify(attempts)})`);
  }
  if (receiver.cutOff.size === 0) problems.push("no send was cut off by a kill");
  return { resent, problems };
}

type Receiver = {
  url: string;
  /** `<path> <webhook-id>` of each send the receiver answered 200, with when the first such send arrived. */
  answered: Map<string, number>;
  /** `<path> <webhook-id>` of each send cut off (the connection closed while the receiver held it). */
  cutOff: Set<string>;
  holding(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
};

/** A webhook receiver on loopback (one path per endpoint) that holds every send HOLD_MS before answering 200. */
async function startReceiver(): Promise<Receiver> {
  const answered = new Map<string, number>();
  const cutOff = new Set<string>();
  let held = 0;
  const waiters: (() => void)[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const pair = `${req.url} ${String(req.headers["webhook-id"])}`;
    const arrived = Date.now();
    req.resume();
    held++;
    waiters.splice(0).forEach((wake) => wake());
    let done = false;
    res.on("close", () => {
      held--;
      if (!done) cutOff.add(pair);
    });
    setTimeout(() => {
      if (res.destroyed) return;
      done = true;
      if (!answered.has(pair)) answered.set(pair, arrived);
      res.writeHead(200).end();
    }, HOLD_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    answered,
    cutOff,
    holding: (timeoutMs) =>
      held > 0 ? Promise.resolve() : Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), sleep(timeoutMs).then(() => undefined)]),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + patient(timeoutMs);
  while (!(await condition()) && Date.now() < deadline) await sleep(250);
}

async function forEachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

/**
 * A 5xx the server should never give. The binding contract's one 5xx that is a client's answer is a
 * withdrawal's insufficient funds (500 {error, details}, code INSUFFICIENT_FUNDS): not a server error.
 */
function isServerError(answer: Answer): boolean {
  return answer.status >= 500 && (answer.body as { code?: unknown } | undefined)?.code !== "INSUFFICIENT_FUNDS";
}
