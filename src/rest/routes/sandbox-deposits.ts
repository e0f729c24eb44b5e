import { graphql } from "../../graphql/typed.js";
import { DepositFields, depositBody } from "../../deposits/representation.js";
import { SimulateDeposit } from "../../sandbox/deposits.js";
import { doc, named, withAmount } from "../docs.js";
import { examples } from "../examples.js";
import { code, route } from "../route.js";
import { Deposit } from "./deposits.js";

const DEPOSIT_ID = { id: "the deposit's id" };

export const sandboxDepositRoutes = [
  route({
    method: "POST",
    path: "/v1/sandbox/deposits",
    operation: graphql(`mutation SimulateDeposit($input: SimulateDepositInput!) { simulateDeposit(input: $input) { ...DepositFields } }`, [DepositFields]),
    variables: ({ body }) => ({ input: { userId: body.userId, currency: code(body.currency), amount: body.amount, chainId: body.chainId } }),
    result: (data) => depositBody(data.simulateDeposit),
    status: 201,
    docs: {
      summary: "Sandbox: a deposit arrives (PENDING; it settles by itself after SANDBOX_SETTLE_MS)",
      description: "A fiat currency needs the user's virtual account in it; a token (USDC, …) arrives on `chainId`.",
      body: named("SimulateDepositRequest", withAmount(SimulateDeposit)),
      response: Deposit,
      errors: ["NOT_FOUND"],
      example: { body: { userId: examples.userId, currency: "NGN", amount: 50000 }, response: examples.deposit },
    },
  }),
  route({
    method: "POST",
    path: "/v1/sandbox/deposits/:id/complete",
    operation: graphql(`mutation CompleteDeposit($id: ID!) { completeDeposit(id: $id) { ...DepositFields } }`, [DepositFields]),
    variables: ({ params }) => ({ id: params.id }),
    result: (data) => depositBody(data.completeDeposit),
    docs: {
      summary: "Sandbox: the deposit completes: credited, converted and forwarded",
      params: DEPOSIT_ID,
      response: Deposit,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: { response: { ...examples.deposit, status: "COMPLETED", updatedAt: examples.later } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/sandbox/deposits/:id/fail",
    operation: graphql(`mutation FailDeposit($id: ID!, $reason: String) { failDeposit(id: $id, reason: $reason) { ...DepositFields } }`, [DepositFields]),
    variables: ({ params, body }) => ({ id: params.id, reason: body.reason }),
    result: (data) => depositBody(data.failDeposit),
    docs: {
      summary: "Sandbox: the deposit fails",
      params: DEPOSIT_ID,
      body: doc.sandboxFailure,
      response: Deposit,
      errors: ["NOT_FOUND", "CONFLICT"],
      example: { body: { reason: "sender recalled the payment" }, response: { ...examples.deposit, status: "FAILED", updatedAt: examples.later } },
    },
  }),
];
