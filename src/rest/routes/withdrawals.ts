import { z } from "zod";
import { withNumbers } from "../../representation.js";
import { graphql } from "../../graphql/typed.js";
import { WithdrawalFields, withdrawalBody } from "../../withdrawals/representation.js";
import { WITHDRAWAL_STATUSES } from "../../withdrawals/service.js";
import { BANK_CURRENCIES, BankWithdrawal, NgnWithdrawal, UsdcWithdrawal } from "../../withdrawals/validation.js";
import { NETWORK_NAMES } from "../../providers/chains.js";
import { doc, named, withAmount } from "../docs.js";
import { examples } from "../examples.js";
import { METADATA_DESCRIPTION } from "../../metadata.js";
import { PIX_KEY_TYPES } from "../../providers/brazil.js";
import { code, found, integer, route } from "../route.js";

/** A Pix key as sent, its keyType in the enum's upper case (accepted in any case like other codes); anything else as given, for GraphQL to refuse. */
const pixKey = (pix: unknown) => (pix && typeof pix === "object" && !Array.isArray(pix) ? { ...pix, keyType: code((pix as { keyType?: unknown }).keyType) } : pix);

const Withdrawal = named("Withdrawal", z.object({
  reference: z.string(),
  userId: doc.id,
  type: z.string().describe("BANK, NGN_BANK or USDC"),
  currency: z.string(),
  amount: doc.money,
  fee: doc.money.describe("networkFee plus developerFee: everything debited beside the amount"),
  developerFee: doc.money.optional().describe("the client's own fee (part of fee), present only when the withdrawal carries one"),
  networkFee: doc.money
    .optional()
    .describe("our network fee (part of fee), present only on a withdrawal sent on a chain that pays one: debited on top of the amount (which arrives whole), refunded if the withdrawal fails or is cancelled"),
  status: z.enum(WITHDRAWAL_STATUSES).describe("PENDING → PROCESSING → COMPLETED; FAILED from PENDING or PROCESSING; RETURNED from COMPLETED; CANCELLED from PENDING by the client"),
  destination: z.string().describe("the account paid, masked: ****6789, or the ends of the address: 0xA0b8…eB48"),
  failureReason: z.string().nullable().describe("why it FAILED; null otherwise"),
  returnReason: z.string().nullable().describe("why the bank returned it; null until RETURNED"),
  transactionHash: z.string().optional().describe("USDC on a live network: the transaction that carries it (the latest broadcast, then the one mined); absent otherwise"),
  createdAt: doc.timestamp,
  updatedAt: doc.timestamp,
  metadata: doc.metadata.describe(METADATA_DESCRIPTION),
  livemode: doc.livemode,
}));
const HOLDER = { userId: examples.userId, firstName: "Ada", lastName: "Lovelace", dob: "1990-05-17" };
const REFERENCE = { reference: "the withdrawal's reference" };

/** Every withdrawal body: the amount and the optional developer fee as JSON numbers. */
const withFees = <T extends Parameters<typeof withAmount>[0]>(schema: T) =>
  withAmount(schema).extend({
    developerFee: z
      .number()
      .min(0)
      .optional()
      .describe("the client's own fee in the withdrawal's currency, ≥ 0 (default 0): debited with the amount (the balance must cover both), credited to the client's revenue (GET /v1/balances); refunded if the withdrawal fails, kept if it is returned"),
  });

/** The contract's legacy behaviour: insufficient funds on any withdrawal path is a 500 {error, details}. */
const LEGACY_FUNDS_ERROR = { INSUFFICIENT_FUNDS: { status: 500 } } as const;

export const withdrawalRoutes = [
  route({
    method: "GET",
    path: "/v1/withdrawal/currencies",
    operation: graphql(`query ListWithdrawalCurrencies { supportedWithdrawalCurrencies { code name } }`),
    result: (data) => ({
      supportedCurrencies: data.supportedWithdrawalCurrencies.map((c) => c.code),
      description: Object.fromEntries(data.supportedWithdrawalCurrencies.map((c) => [c.code, c.name])),
    }),
    docs: {
      summary: "Currencies of bank withdrawals",
      response: z.object({ supportedCurrencies: z.array(z.string()), description: z.record(z.string(), z.string()) }),
      example: {
        response: {
          supportedCurrencies: ["USD", "EUR", "MXN", "BRL"],
          description: { USD: "US Dollar", EUR: "Euro", MXN: "Mexican Peso", BRL: "Brazilian Real" },
        },
      },
    },
  }),
  route({
    method: "POST",
    path: "/v1/withdrawal/:currency",
    operation: graphql(`mutation WithdrawToBank($input: WithdrawToBankInput!) { withdrawToBank(input: $input) { reference currency amount status } }`),
    variables: ({ params, body }) => ({
      input: {
        currency: code(params.currency),
        userId: body.userId,
        firstName: body.firstName,
        lastName: body.lastName,
        dob: body.dob,
        amount: body.amount,
        developerFee: body.developerFee,
        bankAccount: body.bankAccount,
        pix: pixKey(body.pix),
        taxId: body.taxId,
        metadata: body.metadata,
      },
    }),
    result: ({ withdrawToBank: w }) => ({
      success: true,
      message: `${w.currency} withdrawal initiated`,
      currency: w.currency,
      ...withNumbers({ amount: w.amount }, ["amount"]),
      reference: w.reference,
      status: w.status,
    }),
    errors: LEGACY_FUNDS_ERROR,
    docs: {
      summary: "Withdraw to the user's own bank account",
      description:
        "The holder's names and date of birth must match the user. Bank details are checked per currency (ABA, IBAN/BIC, CLABE, BRL bank-branch). " +
        "BRL takes either `bankAccount` or `pix` (`keyType` CPF, CNPJ, EMAIL, PHONE or EVP, and its `key`); `taxId` (the recipient's CPF or CNPJ, check digits validated) is required with `pix` and optional with `bankAccount`.",
      params: { currency: doc.oneOf(BANK_CURRENCIES, "the account's currency") },
      body: named(
        "BankWithdrawalRequest",
        withFees(BankWithdrawal).extend({
          pix: z
            .object({ keyType: doc.oneOf(PIX_KEY_TYPES, "the key's type"), key: z.string().describe("CPF: 11 digits; CNPJ: 14 characters; EMAIL; PHONE: +5511987654321; EVP: a lower-case UUID") })
            .nullish()
            .meta({ description: "BRL only, instead of bankAccount: the recipient's Pix key", examples: [{ keyType: "CPF", key: "52998224725" }] }),
        }),
      ),
      response: z.object({
        success: z.boolean(),
        message: z.string(),
        currency: z.string(),
        amount: doc.money,
        reference: z.string(),
        status: z.string(),
      }),
      errors: ["NOT_FOUND", "INSUFFICIENT_FUNDS"],
      example: {
        body: { ...HOLDER, amount: 25, bankAccount: { account: "000123456789", routing: "021000021", type: "checking" } },
        response: { success: true, message: "USD withdrawal initiated", currency: "USD", amount: 25, reference: examples.withdrawal.reference, status: "PENDING" },
      },
    },
  }),
  route({
    method: "POST",
    path: "/v1/withdrawals/ngn",
    operation: graphql(`mutation WithdrawNgn($input: WithdrawNgnInput!) { withdrawNgn(input: $input) { ...WithdrawalFields } }`, [WithdrawalFields]),
    variables: ({ body }) => ({
      input: {
        userId: body.userId,
        amount: body.amount,
        developerFee: body.developerFee,
        accountNumber: body.accountNumber,
        bankCode: body.bankCode,
        accountName: body.accountName,
        bankName: body.bankName,
        narration: body.narration,
        metadata: body.metadata,
      },
    }),
    result: (data) => withdrawalBody(data.withdrawNgn),
    errors: LEGACY_FUNDS_ERROR,
    docs: {
      summary: "Withdraw NGN to a Nigerian bank account (NUBAN)",
      body: named("NgnWithdrawalRequest", withFees(NgnWithdrawal)),
      response: Withdrawal,
      errors: ["NOT_FOUND", "INSUFFICIENT_FUNDS"],
      example: {
        body: { userId: examples.userId, amount: 20000, developerFee: 150, accountNumber: "0123456785", bankCode: "058", accountName: "Ada Lovelace", narration: "rent", metadata: { invoice: "inv_2041" } },
        response: { ...examples.withdrawal, destination: "****6785", fee: 150, developerFee: 150, metadata: { invoice: "inv_2041" } },
      },
    },
  }),
  route({
    method: "POST",
    path: "/v1/withdrawals/usdc",
    operation: graphql(`mutation WithdrawUsdc($input: WithdrawUsdcInput!) { withdrawUsdc(input: $input) { ...WithdrawalFields } }`, [WithdrawalFields]),
    variables: ({ body }) => ({
      input: { userId: body.userId, amount: body.amount, developerFee: body.developerFee, walletAddress: body.walletAddress, network: code(body.network), chainId: body.chainId, metadata: body.metadata },
    }),
    result: (data) => withdrawalBody(data.withdrawUsdc),
    errors: LEGACY_FUNDS_ERROR,
    docs: {
      summary: "Withdraw USDC on-chain",
      description:
        "`walletAddress`: all-lower, all-upper or EIP-55 mixed case; never the zero address, a token contract, a treasury or a deposit address of this platform (400 naming it). " +
        "On a chain, `amount` must be at least the network's minimum (400 naming it, with the minimum) and the network fee is debited on top (`networkFee`); the transfer carries `amount` whole.",
      body: named("UsdcWithdrawalRequest", withFees(UsdcWithdrawal).extend({ network: doc.oneOf(NETWORK_NAMES, "the chain; must agree with chainId") })),
      response: Withdrawal,
      errors: ["NOT_FOUND", "INSUFFICIENT_FUNDS"],
      example: {
        body: { userId: examples.userId, amount: 15, walletAddress: "0x71C7656EC7ab88b098defB751B7401B5f6d8976F", network: "BASE", chainId: 8453 },
        response: { ...examples.withdrawal, type: "USDC", currency: "USDC", amount: 15, destination: "0x71C7…976F" },
      },
    },
  }),
  route({
    method: "GET",
    path: "/v1/withdrawals/user/:userId",
    operation: graphql(`query ListWithdrawals($id: ID!, $page: Int, $limit: Int) { user(id: $id) { withdrawalsPage(page: $page, limit: $limit) { ...WithdrawalFields } } }`, [WithdrawalFields]),
    variables: ({ params, query }) => ({ id: params.userId, page: integer(query.page), limit: integer(query.limit) }),
    result: (data) => found(data.user).withdrawalsPage.map(withdrawalBody),
    docs: {
      summary: "The user's withdrawals, newest first",
      params: doc.userParam,
      query: doc.pageQuery,
      response: z.array(Withdrawal),
      errors: ["NOT_FOUND"],
      example: { response: [examples.withdrawal] },
    },
  }),
  route({
    method: "GET",
    path: "/v1/withdrawals/:reference",
    operation: graphql(`query GetWithdrawal($reference: ID!) { withdrawal(reference: $reference) { ...WithdrawalFields } }`, [WithdrawalFields]),
    variables: ({ params }) => ({ reference: params.reference }),
    result: (data) => withdrawalBody(found(data.withdrawal)),
    docs: { summary: "A withdrawal's status", params: REFERENCE, response: Withdrawal, errors: ["NOT_FOUND"], example: { response: examples.withdrawal } },
  }),
  route({
    method: "POST",
    path: "/v1/withdrawals/:reference/cancel",
    operation: graphql(`mutation CancelWithdrawal($reference: ID!) { cancelWithdrawal(reference: $reference) { ...WithdrawalFields } }`, [WithdrawalFields]),
    variables: ({ params }) => ({ reference: params.reference }),
    result: (data) => withdrawalBody(data.cancelWithdrawal),
    docs: {
      summary: "Cancel a withdrawal not yet sent",
      description:
        "PENDING → CANCELLED: the amount and the fee return to the balance, once. A withdrawal on a chain can be cancelled only while its transfer is not signed; after that, or once PROCESSING, 409.",
      params: REFERENCE,
      response: Withdrawal,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: { response: { ...examples.withdrawal, status: "CANCELLED" } },
    },
  }),
];

const HELPER_RULE =
  "A withdrawal already in the target status is answered unchanged (a retried helper writes nothing); any other transition not allowed from its status is 409 {error}, writing nothing.";

export const sandboxWithdrawalRoutes = [
  route({
    method: "POST",
    path: "/v1/sandbox/withdrawals/:reference/process",
    operation: graphql(`mutation ProcessWithdrawal($reference: ID!) { processWithdrawal(reference: $reference) { ...WithdrawalFields } }`, [WithdrawalFields]),
    variables: ({ params }) => ({ reference: params.reference }),
    result: (data) => withdrawalBody(data.processWithdrawal),
    docs: {
      summary: "Sandbox: the payout provider accepts the payout (PENDING → PROCESSING)",
      description: HELPER_RULE,
      params: REFERENCE,
      response: Withdrawal,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: { response: { ...examples.withdrawal, status: "PROCESSING" } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/sandbox/withdrawals/:reference/complete",
    operation: graphql(`mutation CompleteWithdrawal($reference: ID!) { completeWithdrawal(reference: $reference) { ...WithdrawalFields } }`, [WithdrawalFields]),
    variables: ({ params }) => ({ reference: params.reference }),
    result: (data) => withdrawalBody(data.completeWithdrawal),
    docs: {
      summary: "Sandbox: the payout succeeds (PENDING or PROCESSING → COMPLETED)",
      description: `From PENDING it passes through PROCESSING: both changes are recorded, with their events. ${HELPER_RULE}`,
      params: REFERENCE,
      response: Withdrawal,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: { response: { ...examples.withdrawal, status: "COMPLETED" } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/sandbox/withdrawals/:reference/fail",
    operation: graphql(`mutation FailWithdrawal($reference: ID!, $reason: String) { failWithdrawal(reference: $reference, reason: $reason) { ...WithdrawalFields } }`, [WithdrawalFields]),
    variables: ({ params, body }) => ({ reference: params.reference, reason: body.reason }),
    result: (data) => withdrawalBody(data.failWithdrawal),
    docs: {
      summary: "Sandbox: the payout fails (PENDING or PROCESSING → FAILED); the amount and the fee return to the balance",
      description: `A WITHDRAWAL_REVERSAL restores the amount and the developer fee. ${HELPER_RULE}`,
      params: REFERENCE,
      body: doc.sandboxFailure,
      response: Withdrawal,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: { body: { reason: "account closed" }, response: { ...examples.withdrawal, status: "FAILED", failureReason: "account closed" } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/sandbox/withdrawals/:reference/return",
    operation: graphql(`mutation ReturnWithdrawal($reference: ID!, $reason: String) { returnWithdrawal(reference: $reference, reason: $reason) { ...WithdrawalFields } }`, [WithdrawalFields]),
    variables: ({ params, body }) => ({ reference: params.reference, reason: body.reason }),
    result: (data) => withdrawalBody(data.returnWithdrawal),
    docs: {
      summary: "Sandbox: the bank sends a completed payout back (COMPLETED → RETURNED); the amount returns, the developer fee is kept",
      description: `A WITHDRAWAL_REVERSAL restores the amount only. ${HELPER_RULE}`,
      params: REFERENCE,
      body: z.object({ reason: z.string().optional().describe("why the bank returned it (returnReason; at most 500 characters)") }),
      response: Withdrawal,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: {
        body: { reason: "beneficiary account closed" },
        response: { ...examples.withdrawal, status: "RETURNED", returnReason: "beneficiary account closed" },
      },
    },
  }),
];
