/**
 * The records the OpenAPI examples are made of: one consistent story (a client, its user Ada, her
 * NGN account, a deposit, its ledger entries), so that the example of each operation reads like a
 * real exchange. Each route's example (in src/rest/routes/*) is checked against its schemas by
 * test/openapi.test.ts.
 */
const clientId = "6a1f0c3e-2b7d-4e59-8c14-93d0b2a7f5e1";
const userId = "3f2b8c1e-5d4a-4b7e-9c2f-1a6e8d0b7c35";
const at = "2026-11-24T09:30:00.000Z";
const later = "2026-11-24T09:30:02.000Z";
const custodyAddress = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";

const user = {
  id: userId,
  createdAt: at,
  updatedAt: at,
  firstName: "Ada",
  lastName: "Lovelace",
  phoneNumber: "+14155552671",
  email: "ada@example.com",
  clientId,
  externalId: "cus_8812",
  metadata: { segment: "gold", referrer: "partner-17" } as Record<string, string>,
  livemode: false,
};

const apiKey = {
  id: "0d5c2a8e-7f41-4b3a-a9e6-2c8d1f4b6a09",
  prefix: "fpk_test_0123456789ab",
  mode: "test",
  name: "backend",
  permissions: null,
  createdAt: at,
  lastUsedAt: later,
  revokedAt: null,
  expiresAt: null,
  allowedIps: null,
  livemode: false,
};

const client = { id: clientId, email: "dev@acme.example", name: "Acme", createdAt: at };

const destination = { destinationAsset: "USDC", destinationNetwork: "ETHEREUM", destinationAddress: custodyAddress };

const ngnAccount = {
  id: "b7e3a1d4-9c2f-4e8b-a6d5-0f1e2c3b4a59",
  userId,
  currency: "NGN",
  createdAt: at,
  ...destination,
  accountName: "Ada Lovelace",
  accountNumber: "0123456789",
  bankName: "Sandbox Bank NG",
  bankCode: "058",
  metadata: {} as Record<string, string>,
  livemode: false,
};

const usdAccount = {
  id: "c8f4b2e5-0d3a-4f9c-b7e6-1a2f3d4c5b60",
  userId,
  currency: "USD",
  createdAt: at,
  ...destination,
  bankName: "Sandbox Bank US",
  accountNumber: "9876543210",
  routingNumber: "021000021",
  accountHolderName: "Ada Lovelace",
  accountHolderType: "individual",
  bankAddress: "1 Sandbox Plaza, New York, NY 10001",
  metadata: {} as Record<string, string>,
  livemode: false,
};

const wallet = {
  id: "e1d2c3b4-a596-4871-9a0b-1c2d3e4f5a6b",
  userId,
  clientId,
  walletId: "wal_5f3c9a1e7b2d",
  addressId: "adr_8e4b2c6d0a1f",
  address: custodyAddress,
  blockchain: "ETHEREUM",
  createdAt: at,
  updatedAt: at,
  livemode: false,
};

const card = {
  id: "f2e3d4c5-b6a7-4980-8b1c-2d3e4f5a6b7c",
  userId,
  providerId: "card_3c7e1a9f5b2d",
  cardNumber: "4111 1111 1111 1111",
  cardCVV: "123",
  cardExpiry: "11/29",
  createdAt: at,
  updatedAt: at,
  livemode: false,
};

const cardTransaction = {
  id: "a3b4c5d6-e7f8-4091-a2b3-c4d5e6f7a8b9",
  amount: 3.5,
  balance: 96.5,
  created_ts: later,
  description: "Coffee",
  status: "SETTLED",
  type: "DEBIT",
  livemode: false,
};

const cardAuthorization = {
  id: "b4c5d6e7-f8a9-40b1-83c4-d5e6f7a8b9c0",
  userId,
  cardId: card.id,
  amount: 42,
  currency: "USD",
  merchant: "Hotel Sandbox",
  status: "PENDING",
  declineReason: null,
  capturedAmount: null,
  expiresAt: "2026-12-01T09:30:00.000Z",
  createdAt: at,
  updatedAt: at,
  livemode: false,
};

const usdcAccount = {
  id: "d4e5f6a7-b8c9-40d1-92e3-f4a5b6c7d8e9",
  userId,
  chain: "BASE",
  chainId: 8453,
  address: "0x71C7656EC7ab88b098defB751B7401B5f6d8976F",
  tokenAddress: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
  balance: 0,
  createdAt: at,
  livemode: false,
};

const depositId = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9";
const deposit = {
  id: depositId,
  userId,
  eventId: "sbx_ngn_7c1e9a3f5b2d4e6a",
  amount: 50000,
  status: "PENDING",
  currency: "NGN",
  createdAt: at,
  updatedAt: at,
  paymentReference: "SBX-PAY-000123",
  livemode: false,
};

const ledgerEntry = {
  id: "6f7a8b9c-0d1e-4f2a-b3c4-d5e6f7a8b9c0",
  userId,
  type: "DEPOSIT",
  currency: "NGN",
  amount: 50000,
  balanceBefore: 0,
  balanceAfter: 50000,
  referenceId: depositId,
  createdAt: later,
  livemode: false,
};

const conversionTerms = { from: "USD", to: "EUR", amount: 10, rate: 0.916, fee: 0.01, convertedAmount: 9.15084 };

const withdrawal = {
  reference: "wd_5f3c9a1e7b2d4c6e8a0b1d3f",
  userId,
  type: "NGN_BANK",
  currency: "NGN",
  amount: 20000,
  fee: 0,
  status: "PENDING",
  destination: "****6789",
  failureReason: null,
  returnReason: null,
  createdAt: later,
  updatedAt: later,
  metadata: {} as Record<string, string>,
  livemode: false,
};

const event = {
  id: "evt_000000000000a3f20000000000000007",
  type: "deposit.completed",
  createdAt: later,
  livemode: false,
  data: { object: { ...deposit, status: "COMPLETED", updatedAt: later, livemode: false } },
};

const auditLogEntry = {
  id: "3f9e2d1c-0b8a-4c7d-9e6f-5a4b3c2d1e0f",
  at: later,
  actor: { type: "api_key", id: apiKey.id },
  operation: "createUser",
  targetIds: [userId],
  requestId: "2b1c0d9e-8f7a-4b6c-9d5e-4f3a2b1c0d9e",
  ip: "203.0.113.7",
  outcome: "succeeded",
  livemode: false,
};

const webhookEndpoint = {
  id: "7a8b9c0d-1e2f-4a3b-84c5-d6e7f8a9b0c1",
  url: "https://acme.example/hooks/fintech",
  events: ["deposit.completed", "deposit.failed"],
  description: "deposits",
  enabled: true,
  createdAt: at,
  metadata: { team: "payments" } as Record<string, string>,
  livemode: false,
};

const deliveryAttempt = {
  id: "8b9c0d1e-2f3a-4b4c-95d6-e7f8a9b0c1d2",
  eventId: event.id,
  attempt: 1,
  status: 200,
  succeeded: true,
  error: null,
  durationMs: 84,
  createdAt: later,
  nextAttemptAt: null,
  livemode: false,
};

export const examples = {
  userId,
  user,
  newUser: {
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    phoneNumber: user.phoneNumber,
    dob: "1990-05-17",
    externalId: user.externalId,
    metadata: user.metadata,
  },
  apiKey,
  auditLogEntry,
  client,
  ngnAccount,
  usdAccount,
  wallet,
  card,
  cardTransaction,
  cardAuthorization,
  usdcAccount,
  deposit,
  ledgerEntry,
  conversionTerms,
  withdrawal,
  event,
  webhookEndpoint,
  webhookSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  deliveryAttempt,
  at,
  later,
};
