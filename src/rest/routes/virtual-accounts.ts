import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { VirtualAccountFields, virtualAccountBody } from "../../accounts/virtual-account-representation.js";
import { CreateVirtualAccount } from "../../accounts/virtual-account-service.js";
import { MAX_DEVELOPER_FEE_PERCENT } from "../../developer-fees/rules.js";
import { VIRTUAL_ACCOUNT_CURRENCIES } from "../../accounts/virtual-account-currencies.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { METADATA_DESCRIPTION } from "../../metadata.js";
import { code, route } from "../route.js";

const common = {
  id: doc.id,
  userId: doc.id,
  currency: z.string(),
  createdAt: doc.timestamp,
  destinationAsset: z.string().describe("USDC, USDT or DAI"),
  destinationNetwork: z.string().describe("ETHEREUM, POLYGON, BASE, ARBITRUM or OPTIMISM"),
  destinationAddress: z.string(),
  developerFeePercent: z.number().optional().describe("the client's own fee on each deposit, in percent; present only when the account charges one"),
  metadata: doc.metadata.describe(METADATA_DESCRIPTION),
  livemode: doc.livemode,
};
/** The two shapes of the contract: NGN, and the bank shape of USD, EUR, MXN, BRL. */
export const VirtualAccount = z.union([
  named("NgnVirtualAccount", z.object({ ...common, accountName: z.string(), accountNumber: z.string(), bankName: z.string(), bankCode: z.string() })),
  named("BankVirtualAccount", z.object({
    ...common,
    bankName: z.string(),
    accountNumber: z.string(),
    routingNumber: z.string(),
    accountHolderName: z.string(),
    accountHolderType: z.string().describe("individual"),
    bankAddress: z.string(),
  })),
]);

export const virtualAccountRoutes = [
  route({
    method: "POST",
    path: "/v1/virtual-account/:currency",
    operation: graphql(`mutation CreateVirtualAccount($input: CreateVirtualAccountInput!) { createVirtualAccount(input: $input) { ...VirtualAccountFields } }`, [VirtualAccountFields]),
    variables: ({ params, body }) => ({
      input: {
        currency: code(params.currency),
        userId: body.userId,
        destinationAsset: code(body.destinationAsset),
        destinationNetwork: code(body.destinationNetwork),
        address: body.address,
        developerFeePercent: body.developerFeePercent,
        metadata: body.metadata,
      },
    }),
    result: (data) => virtualAccountBody(data.createVirtualAccount),
    docs: {
      summary: "Open a virtual bank account whose deposits are converted and forwarded on-chain",
      description: "Fiat that arrives is converted at once to `destinationAsset` and sent to the address (default: the user's wallet).",
      params: { currency: doc.oneOf(VIRTUAL_ACCOUNT_CURRENCIES, "the account's currency") },
      body: named(
        "CreateVirtualAccountRequest",
        CreateVirtualAccount.extend({
          developerFeePercent: z
            .number()
            .min(0)
            .max(MAX_DEVELOPER_FEE_PERCENT)
            .optional()
            .describe("the client's own fee on each deposit (like Bridge's developer_fee_percent): 0 to 10 percent, at most 2 decimals, default 0. It is taken from the converted amount, in destinationAsset, before forwarding, and credited to the client's revenue (GET /v1/balances)"),
        }),
      ),
      response: VirtualAccount,
      errors: ["NOT_FOUND", "PROVIDER_ERROR"],
      example: {
        body: { userId: examples.userId, developerFeePercent: 1.5, metadata: { purpose: "rent" } },
        response: { ...examples.ngnAccount, developerFeePercent: 1.5, metadata: { purpose: "rent" } },
      },
    },
  }),
];
