import { GraphQLError, Kind } from "graphql";
import { exactDecimalOf, plainDecimal } from "../ledger/amount.js";
import { builder } from "./builder.js";

const DECIMAL = /^-?\d+(\.\d+)?$/;

/** Exact decimal amounts travel as strings; JSON numbers are accepted on input for REST clients. */
builder.scalarType("Decimal", {
  description: "An exact decimal number, as a string (for example \"1250.50\").",
  serialize: (value) => plainDecimal(value),
  parseValue: (value) => {
    if (typeof value === "number") {
      const text = exactDecimalOf(value);
      if (text === undefined) throw new GraphQLError("has more digits than a JSON number carries exactly; send it as a string");
      return text;
    }
    if (typeof value !== "string" || !DECIMAL.test(value)) throw new GraphQLError("must be a decimal number");
    return value;
  },
  parseLiteral: (node) => {
    if ((node.kind === Kind.STRING || node.kind === Kind.FLOAT || node.kind === Kind.INT) && DECIMAL.test(node.value)) {
      return node.value;
    }
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
