import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseContentType } from "content-type";
import express, { type NextFunction, type Request } from "express";
import { AppError } from "../errors.js";
import { parseRequestJson } from "../exact-json.js";

export const BODY_LIMIT = "100kb";
const JSON_TYPES = ["application/json", "application/*+json"];

/** A request once `readBody` has run: its body as parsed JSON, text, or undefined when it had none (or an empty JSON one). */
export type RequestWithBody = IncomingMessage & { body?: unknown };

/**
 * Reads every request body under one size limit, whatever its content type (413 beyond it). JSON is
 * parsed without losing money: a number that a double cannot hold exactly (0.123456789012345678,
 * say) is passed on as its decimal text, which the Decimal scalar and the amount parser take as they
 * take a string; a number written with an exponent is refused as the string of its text would be
 * (parseRequestJson). Other bodies (application/graphql, form-encoded) are passed on as text, for yoga,
 * which takes no multipart uploads. An Express middleware.
 */
export function readBody() {
  const readJson = express.text({ type: JSON_TYPES, limit: BODY_LIMIT });
  // Whatever the JSON reader did not take, under the same limit (a content type is no way around it).
  const readOther = express.text({ type: () => true, limit: BODY_LIMIT });
  const read = (req: RequestWithBody, res: ServerResponse, done: (err?: unknown) => void) =>
    readJson(req, res, (err?: unknown) => {
      if (err) return done(err);
      if (typeof req.body !== "string") return readOther(req, res, done);
      if (req.body.trim() === "") {
        req.body = undefined;
        return done();
      }
      try {
        req.body = parseRequestJson(req.body);
        done();
      } catch {
        done(Object.assign(new Error("Malformed JSON body"), { type: "entity.parse.failed" }));
      }
    });
  return (req: RequestWithBody, res: ServerResponse, next: NextFunction) => {
    if (!isUtf8(req.headers["content-type"])) return next(new AppError("UNSUPPORTED_MEDIA_TYPE", "Send the body in UTF-8 (charset=utf-8, or no charset)"));
    read(req, res, next);
  };
}

/**
 * Bodies are read as UTF-8 only: another charset (UTF-7, say) would be decoded into text that a
 * proxy or firewall inspecting the bytes never saw. No charset, or none that parses, is UTF-8.
 */
function isUtf8(contentType: string | undefined): boolean {
  if (!contentType) return true;
  let charset: string | undefined;
  try {
    charset = parseContentType(contentType).parameters.charset;
  } catch {
    return true;
  }
  return charset === undefined || /^utf-?8$/i.test(charset);
}

/**
 * /v1 speaks JSON: a body of another content type (curl's `-d` sends a form) is refused naming the
 * header to send, instead of being read as no fields (which answered `email is required`).
 */
export function requireJsonBody(req: Request, _res: ServerResponse, next: NextFunction) {
  const hasBody = req.body !== undefined && req.body !== "";
  if (hasBody && !req.is(JSON_TYPES)) return next(new AppError("UNSUPPORTED_MEDIA_TYPE", "The body is not JSON: send it with Content-Type: application/json"));
  next();
}
