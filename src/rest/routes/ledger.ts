import { integer, withNumbers, type Route } from "../route.js";

const ENTRY = "id userId type currency amount balanceBefore balanceAfter referenceId createdAt";
const MONEY = ["amount", "balanceBefore", "balanceAfter"] as const;

const asContractEntry = (entry: Record<string, unknown>) => withNumbers(entry, MONEY);

export const ledgerRoutes: Route[] = [
  {
    method: "GET",
    path: "/v1/transactions/ledger/:userId",
    operation: `query ($id: ID!, $page: Int, $limit: Int) { user(id: $id) { ledger(page: $page, limit: $limit) { ${ENTRY} } } }`,
    variables: ({ params, query }) => ({ id: params.userId, page: integer(query.page), limit: integer(query.limit) }),
    result: (data) => data.user.ledger.map(asContractEntry),
  },
  {
    method: "GET",
    path: "/v1/transactions/ledger/:userId/verify",
    operation: `query ($id: ID!) { user(id: $id) { ledgerVerification { valid chains { currency entries balance valid problems } } } }`,
    variables: ({ params }) => ({ id: params.userId }),
    result: ({ user: { ledgerVerification: report } }) => ({
      valid: report.valid,
      chains: report.chains.map((chain: Record<string, unknown>) => withNumbers(chain, ["balance"])),
    }),
  },
  {
    method: "GET",
    path: "/v1/transactions",
    operation: `query ($page: Int, $limit: Int) { transactions(page: $page, limit: $limit) { page pages total transactions { ${ENTRY} } } }`,
    variables: ({ query }) => ({ page: integer(query.page), limit: integer(query.limit) }),
    result: ({ transactions: page }) => ({ ...page, transactions: page.transactions.map(asContractEntry) }),
  },
];
