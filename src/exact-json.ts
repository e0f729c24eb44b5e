import { parse, stringify } from "lossless-json";
import { ExactNumber } from "./representation.js";

/**
 * JSON text in which every decimal (an ExactNumber, src/representation.ts) is written with all its
 * digits: what REST answers are, and what the event log, webhook bodies and SSE frames are too.
 */
export function exactStringify(value: unknown): string {
  return stringify(value) ?? "";
}

/** JSON text read with each number as an ExactNumber, so exactStringify writes it back digit for digit. */
export function exactParse(text: string): unknown {
  return parse(text, null, (digits) => new ExactNumber(digits));
}
