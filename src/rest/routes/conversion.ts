import { z } from "zod";
import { graphql } from "../../graphql/typed.js";
import { ConversionFields, conversionBody, MONEY } from "../../conversion/representation.js";
import { ConversionRequest, Pair } from "../../conversion/service.js";
import { withNumbers } from "../../representation.js";
import { doc, named } from "../docs.js";
import { examples } from "../examples.js";
import { code, route } from "../route.js";

const QUOTE_ID = "0d1e2f3a-4b5c-4d6e-b7f8-a9b0c1d2e3f4";

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
    operation: graphql(`query GetConversionQuote($from: Currency!, $to: Currency!, $amount: Decimal!) {
      conversionQuote(from: $from, to: $to, amount: $amount) { id from to amount rate fee convertedAmount expiresAt livemode }
    }`),
    variables: ({ query }) => ({ from: code(query.from), to: code(query.to), amount: query.amount }),
    result: (data) => withNumbers(data.conversionQuote, MONEY),
    docs: {
      summary: "Quote a conversion, valid 30 s",
      query: Pair.safeExtend({ amount: z.string().describe("decimal amount in the source currency") }),
      response: named("ConversionQuote", z.object({ id: doc.id, ...terms, expiresAt: doc.timestamp, livemode: doc.livemode })),
      example: { response: { id: QUOTE_ID, ...examples.conversionTerms, expiresAt: examples.later, livemode: false } },
    },
  }),
  route({
    method: "POST",
    path: "/v1/conversion",
    operation: graphql(`mutation CreateConversion($input: CreateConversionInput!) {
      createConversion(input: $input) { ...ConversionFields }
    }`, [ConversionFields]),
    variables: ({ body }) => ({ input: { userId: body.userId, from: code(body.from), to: code(body.to), amount: body.amount, quoteId: body.quoteId } }),
    result: (data) => conversionBody(data.createConversion),
    docs: {
      summary: "Convert between the user's balances, at a quote's rate when quoteId is given",
      body: named("ConversionRequest", z.object({ ...Pair.shape, ...ConversionRequest.shape, amount: doc.money })),
      response: named("Conversion", z.object({ id: doc.id, userId: doc.id, ...terms, quoteId: z.string().nullable(), createdAt: doc.timestamp, livemode: doc.livemode })),
      errors: ["NOT_FOUND", "INSUFFICIENT_FUNDS"],
      example: {
        body: { userId: examples.userId, from: "USD", to: "EUR", amount: 10, quoteId: QUOTE_ID },
        response: { id: "9c0d1e2f-3a4b-4c5d-a6e7-f8a9b0c1d2e3", userId: examples.userId, ...examples.conversionTerms, quoteId: QUOTE_ID, createdAt: examples.later, livemode: false },
      },
    },
  }),
];
