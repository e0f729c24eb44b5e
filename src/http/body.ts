import type { IncomingMessage, ServerResponse } from "node:http";
import express from "express";
import { isSafeNumber, parse } from "lossless-json";

export const BODY_LIMIT = "100kb";
const JSON_TYPES = ["application/json", "application/*+json"];

/** Marks a request whose body was read (a property, not a WeakSet entry: this is on every request). */
const BODY_READ = Symbol("bodyRead");

/** A request once `readBody` has run: its body as parsed JSON, text, or undefined when it had none. */
export type RequestWithBody = IncomingMessage & { body?: unknown; [BODY_READ]?: true };

export type BodyReader = (req: RequestWithBody, res: ServerResponse) => Promise<void>;

/**
 * Reads every request body under one size limit, whatever its content type (413 beyond it). JSON is
 * parsed without losing money: a number that a double cannot hold exactly (0.123456789012345678,
 * say) is passed on as its decimal text, which the Decimal scalar and the amount parser take as they
 * take a string. Other bodies (application/graphql, form-encoded) are passed on as text, for yoga,
 * which takes no multipart uploads. A body is read once, however many handlers ask for it.
 */
export function readBody(): BodyReader {
  const readJson = express.text({ type: JSON_TYPES, limit: BODY_LIMIT });
  // Whatever the JSON reader did not take, under the same limit (a content type is no way around it).
  const readOther = express.text({ type: () => true, limit: BODY_LIMIT });
  const read = (req: RequestWithBody, res: ServerResponse, done: (err?: unknown) => void) =>
    readJson(req, res, (err?: unknown) => {
      if (err) return done(err);
      if (typeof req.body !== "string") return readOther(req, res, done);
      if (req.body.trim() === "") {
        req.body = {};
        return done();
      }
      try {
        req.body = parse(req.body, null, (text) => (isSafeNumber(text) ? Number(text) : text));
        done();
      } catch {
        done(Object.assign(new Error("Malformed JSON body"), { type: "entity.parse.failed" }));
      }
    });
  return async (req, res) => {
    // The front door reads a GraphQL POST's body before offering it to yoga's own path.
    if (req[BODY_READ]) return;
    await new Promise<void>((resolve, reject) => read(req, res, (err) => (err ? reject(err) : resolve())));
    req[BODY_READ] = true;
  };
}
