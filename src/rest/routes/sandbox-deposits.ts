import { SimulateDeposit } from "../../sandbox/deposits.js";
import { doc, withAmount } from "../docs.js";
import { code, type Route } from "../route.js";
import { DEPOSIT_FIELDS, Deposit, depositBody } from "./deposits.js";

const DEPOSIT_ID = { id: "the deposit's id" };

export const sandboxDepositRoutes: Route[] = [
  {
    method: "POST",
    path: "/v1/sandbox/deposits",
    operation: `mutation ($input: SimulateDepositInput!) { simulateDeposit(input: $input) { ${DEPOSIT_FIELDS} } }`,
    variables: ({ body }) => ({ input: { userId: body.userId, currency: code(body.currency), amount: body.amount, chainId: body.chainId } }),
    result: (data) => depositBody(data.simulateDeposit),
    status: 201,
    docs: {
      summary: "Sandbox: a deposit arrives (PENDING; it settles by itself after SANDBOX_SETTLE_MS)",
      description: "A fiat currency needs the user's virtual account in it; a token (USDC, …) arrives on `chainId`.",
      body: withAmount(SimulateDeposit),
      response: Deposit,
      errors: ["NOT_FOUND"],
    },
  },
  {
    method: "POST",
    path: "/v1/sandbox/deposits/:id/complete",
    operation: `mutation ($id: ID!) { completeDeposit(id: $id) { ${DEPOSIT_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => depositBody(data.completeDeposit),
    docs: {
      summary: "Sandbox: the deposit completes: credited, converted and forwarded",
      params: DEPOSIT_ID,
      response: Deposit,
      errors: ["NOT_FOUND", "CONFLICT"],
    },
  },
  {
    method: "POST",
    path: "/v1/sandbox/deposits/:id/fail",
    operation: `mutation ($id: ID!, $reason: String) { failDeposit(id: $id, reason: $reason) { ${DEPOSIT_FIELDS} } }`,
    variables: ({ params, body }) => ({ id: params.id, reason: body.reason }),
    result: (data) => depositBody(data.failDeposit),
    docs: {
      summary: "Sandbox: the deposit fails",
      params: DEPOSIT_ID,
      body: doc.sandboxFailure,
      response: Deposit,
      errors: ["NOT_FOUND", "CONFLICT"],
    },
  },
];
