import { parse, stringify } from "lossless-json";
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
