import { withNumbers, type Route } from "../route.js";

const MONEY = ["amount", "rate", "fee", "convertedAmount"] as const;

export const conversionRoutes: Route[] = [
  {
    method: "GET",
    path: "/v1/conversion/quote",
    operation: `query ($from: String!, $to: String!, $amount: Decimal!) {
      conversionQuote(from: $from, to: $to, amount: $amount) { id from to amount rate fee convertedAmount expiresAt }
    }`,
    variables: ({ query }) => ({ from: query.from, to: query.to, amount: query.amount }),
    result: (data) => withNumbers(data.conversionQuote, MONEY),
  },
  {
    method: "POST",
    path: "/v1/conversion",
    operation: `mutation ($input: CreateConversionInput!) {
      createConversion(input: $input) { id userId from to amount rate fee convertedAmount quoteId createdAt }
    }`,
    variables: ({ body }) => ({ input: { userId: body.userId, from: body.from, to: body.to, amount: body.amount, quoteId: body.quoteId } }),
    result: (data) => withNumbers(data.createConversion, MONEY),
  },
];
