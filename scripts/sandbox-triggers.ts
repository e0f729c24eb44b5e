// The events the sandbox can produce for `npm run trigger`, each through the public API alone: a
// user, the account or funds the event needs, then the sandbox action.

export type Call = <T>(method: "GET" | "POST" | "PATCH", path: string, body?: unknown) => Promise<T>;
type Made = { id: string };

const newUser = (call: Call) =>
  call<Made>("POST", "/v1/user", {
    email: `trigger-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`,
    firstName: "Sandbox",
    lastName: "Trigger",
    phoneNumber: "+2348031234567",
    dob: "1990-01-01",
  });

/** A user with an NGN virtual account, and a sandbox deposit into it (PENDING). */
async function pendingDeposit(call: Call) {
  const user = await newUser(call);
  await call("POST", "/v1/virtual-account/NGN", { userId: user.id });
  const deposit = await call<Made>("POST", "/v1/sandbox/deposits", { userId: user.id, currency: "NGN", amount: 50000 });
  return { user, deposit };
}

/** A user with USD to spend on an issued card (a settled NGN deposit, converted from USDC in part). */
async function cardholder(call: Call) {
  const { user, deposit } = await pendingDeposit(call);
  await call("POST", `/v1/sandbox/deposits/${deposit.id}/complete`);
  await call("POST", "/v1/conversion", { userId: user.id, from: "USDC", to: "USD", amount: 20 });
  await call("GET", `/v1/virtual-cards/${user.id}`);
  return user;
}

/** A USDC withdrawal (PENDING) of a user whose settled NGN deposit became USDC. */
async function withdrawal(call: Call) {
  const { user, deposit } = await pendingDeposit(call);
  await call("POST", `/v1/sandbox/deposits/${deposit.id}/complete`);
  return call<{ reference: string }>("POST", "/v1/withdrawals/usdc", {
    userId: user.id,
    amount: 15,
    walletAddress: "0x71C7656EC7ab88b098defB751B7401B5f6d8976F",
    network: "BASE",
    chainId: 8453,
  });
}

/** A withdrawal taken through sandbox steps (`process`, `complete`, …) in order. */
const withdrawalThrough = (...steps: { path: string; body?: unknown }[]) => async (call: Call) => {
  const { reference } = await withdrawal(call);
  for (const step of steps) await call("POST", `/v1/sandbox/withdrawals/${reference}/${step.path}`, step.body);
  return `withdrawal ${reference}`;
};

const authorization = async (call: Call) => {
  const user = await cardholder(call);
  return call<Made>("POST", "/v1/sandbox/card-authorizations", { userId: user.id, amount: 12.5, merchant: "Hotel Sandbox" });
};

/** Each event type the sandbox can produce, and how: what it made, to print. */
export const TRIGGERS = {
  "user.created": async (call: Call) => `user ${(await newUser(call)).id}`,
  "user.updated": async (call: Call) => {
    const user = await newUser(call);
    await call("PATCH", `/v1/user/${user.id}`, { metadata: { source: "npm run trigger" } });
    return `user ${user.id}`;
  },
  "virtual_account.created": async (call: Call) => {
    const user = await newUser(call);
    await call("POST", "/v1/virtual-account/NGN", { userId: user.id });
    return `NGN account of user ${user.id}`;
  },
  "deposit.created": async (call: Call) => `deposit ${(await pendingDeposit(call)).deposit.id}`,
  "deposit.completed": async (call: Call) => {
    const { deposit } = await pendingDeposit(call);
    await call("POST", `/v1/sandbox/deposits/${deposit.id}/complete`);
    return `deposit ${deposit.id}`;
  },
  "deposit.failed": async (call: Call) => {
    const { deposit } = await pendingDeposit(call);
    await call("POST", `/v1/sandbox/deposits/${deposit.id}/fail`, { reason: "sender recalled the payment" });
    return `deposit ${deposit.id}`;
  },
  "withdrawal.created": withdrawalThrough(),
  "withdrawal.processing": withdrawalThrough({ path: "process" }),
  "withdrawal.completed": withdrawalThrough({ path: "complete" }),
  "withdrawal.failed": withdrawalThrough({ path: "fail", body: { reason: "the bank refused the payout" } }),
  "withdrawal.returned": withdrawalThrough({ path: "complete" }, { path: "return", body: { reason: "the bank sent it back" } }),
  "conversion.completed": async (call: Call) => `USDC → USD conversion of user ${(await cardholder(call)).id}`,
  "card.transaction.created": async (call: Call) => {
    const user = await cardholder(call);
    return `card transaction ${(await call<Made>("POST", "/v1/sandbox/card-transactions", { userId: user.id, amount: 3.5, description: "Coffee" })).id}`;
  },
  "card.authorization.created": async (call: Call) => `card authorization ${(await authorization(call)).id}`,
  "card.authorization.captured": async (call: Call) => {
    const hold = await authorization(call);
    await call("POST", `/v1/sandbox/card-authorizations/${hold.id}/capture`, { amount: 10 });
    return `card authorization ${hold.id}`;
  },
  "card.authorization.reversed": async (call: Call) => {
    const hold = await authorization(call);
    await call("POST", `/v1/sandbox/card-authorizations/${hold.id}/reverse`);
    return `card authorization ${hold.id}`;
  },
} satisfies Record<string, (call: Call) => Promise<string>>;

export type Triggerable = keyof typeof TRIGGERS;
export const isTriggerable = (type: string): type is Triggerable => Object.hasOwn(TRIGGERS, type);
