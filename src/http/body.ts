import express, { type NextFunction, type Request, type Response } from "express";
import { isSafeNumber, parse } from "lossless-json";

export const BODY_LIMIT = "100kb";
const JSON_TYPES = ["application/json", "application/*+json"];

/**
 * Reads every request body under one size limit, whatever its content type (413 beyond it). JSON is
 * parsed without losing money: a number that a double cannot hold exactly (0.123456789012345678,
 * say) is passed on as its decimal text, which the Decimal scalar and the amount parser take as they
 * take a string. Other bodies (application/graphql, form-encoded) are passed on as text, for yoga,
 * which takes no multipart uploads.
 */
export function readBody() {
  const readJson = express.text({ type: JSON_TYPES, limit: BODY_LIMIT });
  // Whatever the JSON reader did not take, under the same limit (a content type is no way around it).
  const readOther = express.text({ type: () => true, limit: BODY_LIMIT });
  return (req: Request, res: Response, next: NextFunction) =>
    readJson(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (typeof req.body !== "string") return readOther(req, res, next);
      if (req.body.trim() === "") {
        req.body = {};
        return next();
      }
      try {
        req.body = parse(req.body, null, (text) => (isSafeNumber(text) ? Number(text) : text));
        next();
      } catch {
        next(Object.assign(new Error("Malformed JSON body"), { type: "entity.parse.failed" }));
      }
    });
}
