import { randomBytes } from "node:crypto";
import type { ExecutionResult } from "graphql";
import { handleStreamOrSingleExecutionResult, type Plugin } from "graphql-yoga";
import { isLosslessNumber } from "lossless-json";
import { exactStringify } from "../exact-json.js";

/** Contexts of operations that resolved a value holding ExactNumbers (an event's `data`). */
const carrying = new WeakSet<object>();

/** Called by a resolver whose value holds ExactNumbers: the operation's answers are then written with every digit. */
export function carriesExactNumbers(ctx: object): void {
  carrying.add(ctx);
}

/**
 * yoga writes each answer (a JSON body, an SSE or multipart part) with the result's own `stringify`
 * when it has one: an answer of an operation that resolved ExactNumbers gets exactStringify, so an
 * event's money reads as REST shows it. Every other answer keeps JSON.stringify, which is faster.
 */
export function useExactNumbers(): Plugin {
  const write = ({ args, result, setResult }: { args: { contextValue: object }; result: ExecutionResult; setResult(result: ExecutionResult): void }) => {
    if (carrying.has(args.contextValue)) setResult({ ...result, stringify: exactStringify } as ExecutionResult);
  };
  return {
    onExecute: () => ({ onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload, write) }),
    onSubscribe: () => ({ onSubscribeResult: (payload) => handleStreamOrSingleExecutionResult(payload, write) }),
  };
}

/**
 * graphql-ws writes its messages with JSON.stringify and a replacer, and a replacer can only return
 * values, never raw JSON text. So the replacer writes each ExactNumber as a string behind a marker
 * that is secret to this process (a client cannot send one that matches), and `withExactNumbers`,
 * applied to the message text before it is sent, puts the digits back as a JSON number.
 */
const MARK = `exact-number-${randomBytes(16).toString("hex")}:`;
const MARKED = new RegExp(`"${MARK}(-?[0-9][0-9.eE+-]*)"`, "g");

export function exactNumberReplacer(this: unknown, key: string, value: unknown): unknown {
  // JSON.stringify has already called the holder's toJSON (a double): the holder still has the ExactNumber.
  const original = (this as Record<string, unknown>)[key];
  return isLosslessNumber(original) ? `${MARK}${original.toString()}` : value;
}

export function withExactNumbers(message: string): string {
  return message.includes(MARK) ? message.replace(MARKED, "$1") : message;
}
