import type { ServerResponse } from "node:http";
import { exactStringify } from "../exact-json.js";

/**
 * A JSON answer, with the headers Express's `res.json` wrote (the contract's clients see no change).
 * Written by `exactStringify`: a decimal number (`ExactNumber`, src/representation.ts) with all its digits.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = exactStringify(body);
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}
