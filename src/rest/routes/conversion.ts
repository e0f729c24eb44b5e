import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { ConversionFields, conversionBody, MONEY } from "../../conversion/representation.js";
import { ConversionRequest, Pair } from "../../conversion/service.js";
import { withNumbers } from "../../representation.js";
import { doc } from "../docs.js";
import { code, route } from "../route.js";

const terms = {
  from: z.string(),
  to: z.string(),
  amount: doc.money,
  rate: z.number().describe("mid rate less the spread"),
  fee: doc.money.describe("in the source currency"),
  convertedAmount: doc.money,
};

export const conversionRoutes = [
  route({
    method: "GET",
    path: "/v1/conversion/quote",
    operation: graphql(`query ($from: Currency!, $to: Currency!, $amount: Decimal!) {
      conversionQuote(from: $from, to: $to, amount: $amount) { id from to amount rate fee convertedAmount expiresAt }
    }`),
    variables: ({ query }) => ({ from: code(query.from), to: code(query.to), amount: query.amount }),
    result: (data) => withNumbers(data.conversionQuote, MONEY),
    docs: {
      summary: "Quote a conversion, valid 30 s",
      query: Pair.safeExtend({ amount: z.string().describe("decimal amount in the source currency") }),
      response: z.object({ id: doc.id, ...terms, expiresAt: doc.timestamp }),
    },
  }),
  route({
    method: "POST",
    path: "/v1/conversion",
    operation: graphql(`mutation ($input: CreateConversionInput!) {
      createConversion(input: $input) { ...ConversionFields }
    }`, [ConversionFields]),
    variables: ({ body }) => ({ input: { userId: body.userId, from: code(body.from), to: code(body.to), amount: body.amount, quoteId: body.quoteId } }),
    result: (data) => conversionBody(data.createConversion),
    docs: {
      summary: "Convert between the user's balances, at a quote's rate when quoteId is given",
      body: z.object({ ...Pair.shape, ...ConversionRequest.shape, amount: doc.money }),
      response: z.object({ id: doc.id, userId: doc.id, ...terms, quoteId: z.string().nullable(), createdAt: doc.timestamp }),
      errors: ["NOT_FOUND", "INSUFFICIENT_FUNDS"],
    },
  }),
];
