import { graphql, type ResultOf } from "../graphql/typed.js";
import { pickKeys, withNumbers } from "../representation.js";

/** The money fields of a conversion and of its quote. */
export const MONEY = ["amount", "rate", "fee", "convertedAmount"] as const;
export const ConversionFields = graphql(`fragment ConversionFields on Conversion { id userId from to amount rate fee convertedAmount quoteId createdAt livemode }`);
const CONVERSION_KEYS = ["id", "userId", "from", "to", "amount", "rate", "fee", "convertedAmount", "quoteId", "createdAt", "livemode"] as const satisfies readonly (keyof ResultOf<typeof ConversionFields>)[];

/** A conversion as REST shows it, money as JSON numbers (also the `data.object` of conversion events). */
export const conversionBody = (conversion: Record<string, unknown>) => withNumbers(pickKeys(conversion, CONVERSION_KEYS), MONEY);
