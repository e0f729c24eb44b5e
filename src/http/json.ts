import type { ServerResponse } from "node:http";

/** A JSON answer, with the headers Express's `res.json` wrote (the contract's clients see no change). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", Buffer.byteLength(text));
  res.end(text);
}
