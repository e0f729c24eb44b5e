import type { Route } from "../route.js";
import { DEPOSIT_FIELDS, depositBody } from "./deposits.js";

export const sandboxDepositRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/sandbox/deposits",
    operation: `mutation ($input: SimulateDepositInput!) { simulateDeposit(input: $input) { ${DEPOSIT_FIELDS} } }`,
    variables: ({ body }) => ({ input: { userId: body.userId, currency: body.currency, amount: body.amount, chainId: body.chainId } }),
    result: (data) => depositBody(data.simulateDeposit),
    status: 201,
  },
  {
    method: "POST",
    path: "/v1/sandbox/deposits/:id/complete",
    operation: `mutation ($id: ID!) { completeDeposit(id: $id) { ${DEPOSIT_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => depositBody(data.completeDeposit),
  },
  {
    method: "POST",
    path: "/v1/sandbox/deposits/:id/fail",
    operation: `mutation ($id: ID!, $reason: String) { failDeposit(id: $id, reason: $reason) { ${DEPOSIT_FIELDS} } }`,
    variables: ({ params, body }) => ({ id: params.id, reason: body.reason }),
    result: (data) => depositBody(data.failDeposit),
  },
];
