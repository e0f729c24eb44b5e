import { pickKeys } from "../pick-keys.js";
import { withNumbers, type Route } from "../route.js";

const MONEY = ["amount", "rate", "fee", "convertedAmount"] as const;
const CONVERSION_KEYS = ["id", "userId", "from", "to", "amount", "rate", "fee", "convertedAmount", "quoteId", "createdAt"] as const;

/** A conversion as REST shows it, money as JSON numbers (also the `data.object` of conversion events). */
export const conversionBody = (conversion: Record<string, unknown>) => withNumbers(pickKeys(conversion, CONVERSION_KEYS), MONEY);

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
      createConversion(input: $input) { ${CONVERSION_KEYS.join(" ")} }
    }`,
    variables: ({ body }) => ({ input: { userId: body.userId, from: body.from, to: body.to, amount: body.amount, quoteId: body.quoteId } }),
    result: (data) => conversionBody(data.createConversion),
  },
];
