import { GraphQLError, Kind } from "graphql";
import { exactDecimalOf, plainDecimal } from "../money/amount.js";
import { ExponentNumber } from "../exact-json.js";
import { builder } from "./builder.js";

const DECIMAL = /^-?\d+(\.\d+)?$/;
const EXPONENT = /^-?\d+(\.\d+)?[eE][+-]?\d+$/;

/**
 * The one rule for money on input, on every route (REST bodies arrive here too): plain decimal
 * notation, as a string or a JSON number. An exponent (`1.5e1`, `"1e1"`, a literal 1e1) is refused
 * the same way whichever form carries it: a JSON number's exponent reaches here as an ExponentNumber
 * (src/exact-json.ts).
 */
function decimalText(value: unknown): string {
  if (value instanceof ExponentNumber || (typeof value === "string" && EXPONENT.test(value.trim()))) {
    throw new GraphQLError("must be a decimal number in plain notation, without an exponent");
  }
  if (typeof value === "number") {
    const text = exactDecimalOf(value);
    if (text === undefined) throw new GraphQLError("has more digits than a JSON number carries exactly; send it as a string");
    return text;
  }
  if (typeof value !== "string" || !DECIMAL.test(value)) throw new GraphQLError("must be a decimal number");
  return value;
}

/** Exact decimal amounts travel as strings; JSON numbers are accepted on input for REST clients. */
builder.scalarType("Decimal", {
  description: "An exact decimal number, as a string in plain notation (for example \"1250.50\"; never 1.2505e3).",
  serialize: (value) => plainDecimal(value),
  parseValue: decimalText,
  parseLiteral: (node) => {
    if (node.kind === Kind.STRING || node.kind === Kind.FLOAT || node.kind === Kind.INT) return decimalText(node.value);
    throw new GraphQLError("must be a decimal number");
  },
});

builder.scalarType("DateTime", {
  description: "An ISO 8601 timestamp in UTC, with milliseconds.",
  serialize: (value) => (value instanceof Date ? value.toISOString() : new Date(value).toISOString()),
  parseValue: (value) => {
    const date = new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new GraphQLError("must be an ISO 8601 timestamp");
    return date;
  },
});

builder.scalarType("JSON", {
  description: "Any JSON value.",
  serialize: (value) => value,
  parseValue: (value) => value,
});

builder.scalarType("Date", {
  description: "A calendar date, YYYY-MM-DD.",
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== "string") throw new GraphQLError("must be a date YYYY-MM-DD");
    return value;
  },
});
