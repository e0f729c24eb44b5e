import express, { type NextFunction, type Request, type Response } from "express";
import { isSafeNumber, parse } from "lossless-json";

/**
 * JSON bodies, parsed without losing money: a number that a double cannot hold exactly
 * (0.123456789012345678, say) is passed on as its decimal text, which the Decimal scalar and the
 * amount parser take as they take a string. Every other number stays a number.
 */
export function jsonBody(limit: string) {
  const readText = express.text({ type: ["application/json", "application/*+json"], limit });
  return (req: Request, res: Response, next: NextFunction) =>
    readText(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (typeof req.body !== "string") return next();
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
