import type { ServerResponse } from "node:http";
import { stringify } from "lossless-json";

/**
 * A JSON answer, with the headers Express's `res.json` wrote (the contract's clients see no change).
 * Written by lossless-json, which is JSON.stringify except that a decimal number (`ExactNumber`,
 * src/representation.ts) is written with all its digits.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = stringify(body) ?? "";
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}
