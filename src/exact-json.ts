import { isSafeNumber, LosslessNumber, parse, stringify } from "lossless-json";
import { ExactNumber, inexactWriteCount } from "./representation.js";

/**
 * JSON text in which every decimal (an ExactNumber, src/representation.ts) is written with all its
 * digits: what REST answers are, and what the event log, webhook bodies and SSE frames are too.
 * Written by the native JSON.stringify, unless a decimal in the value has more digits than its
 * double writes (or the value holds a BigInt): then by lossless-json, which writes the same text
 * with every digit and is several times slower.
 */
export function exactStringify(value: unknown): string {
  const before = inexactWriteCount();
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    return losslessStringify(value); // a BigInt, which lossless-json writes as its digits
  }
  return inexactWriteCount() === before ? (text ?? "") : losslessStringify(value);
}

const losslessStringify = (value: unknown) => stringify(value) ?? "";

/** JSON text read with each number as an ExactNumber, so exactStringify writes it back digit for digit. */
export function exactParse(text: string): unknown {
  return parse(text, null, (digits) => new ExactNumber(digits));
}

/**
 * A JSON number of a request written with an exponent (`1.5e1`). Money is written in plain decimal
 * notation on every route: such a number is passed on as itself, which every input rule refuses (the
 * Decimal scalar naming the field, like the string "1.5e1"; an Int or String field as not one).
 */
export class ExponentNumber {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

const EXPONENT = /[eE]/;

/**
 * A request's JSON (REST and GraphQL over HTTP bodies, GraphQL `variables` in a query string or form):
 * a number a double holds exactly is a number; a longer one is its decimal text (taken as a string
 * is); one written with an exponent is an ExponentNumber.
 */
export function parseRequestJson(text: string): unknown {
  return parse(text, null, (digits) => (EXPONENT.test(digits) ? new ExponentNumber(digits) : isSafeNumber(digits) ? Number(digits) : digits));
}

/**
 * A graphql-ws message with its exponent numbers written as strings, before the protocol library
 * reads it (with JSON.parse, which would make `1.5e1` the 15 it cannot tell apart): the same refusal
 * as on HTTP. Any other text is left as it is.
 */
export function withExponentsAsText(message: string): string {
  if (!/\d[eE]/.test(message)) return message;
  try {
    return stringify(parse(message, null, (digits) => (EXPONENT.test(digits) ? digits : new LosslessNumber(digits)))) ?? message;
  } catch {
    return message;
  }
}
