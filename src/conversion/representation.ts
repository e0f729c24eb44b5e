import { graphql, type ResultOf } from "../graphql/typed.js";
import { asGraphQLValues, pickKeys, withNumbers } from "../representation.js";
import type { Conversion } from "../generated/prisma/client.js";

/** The money fields of a conversion and of its quote. */
export const MONEY = ["amount", "rate", "fee", "convertedAmount"] as const;
export const ConversionFields = graphql(`fragment ConversionFields on Conversion { id userId from to amount rate fee convertedAmount quoteId createdAt livemode }`);
const CONVERSION_KEYS = ["id", "userId", "from", "to", "amount", "rate", "fee", "convertedAmount", "quoteId", "createdAt", "livemode"] as const satisfies readonly (keyof ResultOf<typeof ConversionFields>)[];

/** A conversion as REST shows it, money as JSON numbers (also the `data.object` of conversion events). */
export const conversionBody = (conversion: Record<string, unknown>) => withNumbers(pickKeys(conversion, CONVERSION_KEYS), MONEY);

/** A conversion as REST shows it: the `data.object` of its events. */
export const conversionObject = (conversion: Conversion) => conversionBody(asGraphQLValues(conversion));
