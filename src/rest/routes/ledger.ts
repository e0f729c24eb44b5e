import { z } from "zod";
import { graphql, type ResultOf } from "../../graphql/typed.js";
import { withNumbers } from "../../representation.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { found, integer, route } from "../route.js";

const LedgerEntryFields = graphql(`
  fragment LedgerEntryFields on LedgerEntry { id userId type currency amount balanceBefore balanceAfter referenceId createdAt livemode }
`);
const MONEY = ["amount", "balanceBefore", "balanceAfter"] as const;

const LedgerEntry = named("LedgerEntry", z.object({
  id: doc.id,
  userId: doc.id,
  type: z.string().describe("DEPOSIT, CONVERSION, FEE, WITHDRAWAL, …"),
  currency: z.string(),
  amount: doc.money.describe("signed: credits positive, debits negative"),
  balanceBefore: doc.money,
  balanceAfter: doc.money,
  referenceId: z.string().nullable(),
  createdAt: doc.timestamp,
  livemode: doc.livemode,
}));

const asContractEntry = (entry: ResultOf<typeof LedgerEntryFields>) => withNumbers(entry, MONEY);

export const ledgerRoutes = [
  route({
    method: "GET",
    path: "/v1/transactions/ledger/:userId",
    operation: graphql(`query ListLedgerEntries($id: ID!, $page: Int, $limit: Int) { user(id: $id) { ledgerPage(page: $page, limit: $limit) { ...LedgerEntryFields } } }`, [LedgerEntryFields]),
    variables: ({ params, query }) => ({ id: params.userId, page: integer(query.page), limit: integer(query.limit) }),
    result: (data) => found(data.user).ledgerPage.map(asContractEntry),
    docs: {
      summary: "The user's ledger entries, newest first",
      params: doc.userParam,
      query: doc.pageQuery,
      response: z.array(LedgerEntry),
      errors: ["NOT_FOUND"],
      example: { response: [examples.ledgerEntry] },
    },
  }),
  route({
    method: "GET",
    path: "/v1/transactions/ledger/:userId/verify",
    operation: graphql(`query VerifyLedger($id: ID!) { user(id: $id) { ledgerVerification { valid chains { currency entries balance valid problems } } } }`),
    variables: ({ params }) => ({ id: params.userId }),
    result: ({ user }) => {
      const report = found(user).ledgerVerification;
      return { valid: report.valid, chains: report.chains.map((chain) => withNumbers(chain, ["balance"])) };
    },
    docs: {
      summary: "Recompute the user's hash chains and check that their journals balance",
      params: doc.userParam,
      response: z.object({
        valid: z.boolean(),
        chains: z.array(z.object({ currency: z.string(), entries: z.int(), balance: doc.money, valid: z.boolean(), problems: z.array(z.string()) })),
      }),
      errors: ["NOT_FOUND"],
      example: { response: { valid: true, chains: [{ currency: "NGN", entries: 1, balance: 50000, valid: true, problems: [] }] } },
    },
  }),
  route({
    method: "GET",
    path: "/v1/transactions",
    operation: graphql(`query ListTransactions($page: Int, $limit: Int) { transactionsPage(page: $page, limit: $limit) { page pages total transactions { ...LedgerEntryFields } } }`, [LedgerEntryFields]),
    variables: ({ query }) => ({ page: integer(query.page), limit: integer(query.limit) }),
    result: ({ transactionsPage: page }) => ({ ...page, transactions: page.transactions.map(asContractEntry) }),
    docs: {
      summary: "Ledger entries of all the client's users, newest first",
      query: doc.pageQuery,
      response: z.object({ page: z.int(), pages: z.int(), total: z.int(), transactions: z.array(LedgerEntry) }),
      example: { response: { page: 1, pages: 1, total: 1, transactions: [examples.ledgerEntry] } },
    },
  }),
];
