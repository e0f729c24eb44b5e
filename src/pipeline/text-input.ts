import { visit, type DocumentNode, type ExecutionResult } from "graphql";
import type { Plugin } from "graphql-yoga";
import { AppError } from "../errors.js";
import { maskError } from "../graphql/errors.js";
import type { Logger } from "../logger.js";

/** The longest text any input may carry; fields have their own, tighter, bounds in their services. */
export const MAX_TEXT_LENGTH = 10_000;
/** C0 controls and DEL, except tab, line feed and carriage return. */
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
/** Half of a surrogate pair without the other half: not text, and not storable as UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a text input is refused, or undefined when it is acceptable anywhere. */
export function textProblem(text: string): string | undefined {
  if (text.length > MAX_TEXT_LENGTH) return `must be at most ${MAX_TEXT_LENGTH} characters`;
  if (LONE_SURROGATE.test(text)) return "must be valid Unicode text";
  if (CONTROL_CHARACTERS.test(text)) return "must not contain control characters";
  return undefined;
}

/**
 * The one text rule, for every string input on every transport: each string in the variables and
 * each string literal in the document is checked before anything runs. (REST paths, queries and
 * bodies become variables, so they are covered too.)
 */
export function useTextInputRule(logger: Logger): Plugin {
  const check = (document: DocumentNode, variables: unknown, refuse: (result: ExecutionResult) => void) => {
    const problem = inVariables(variables) ?? inLiterals(document);
    if (problem) refuse({ errors: [maskError(new AppError("BAD_USER_INPUT", problem.message, { param: problem.param }), logger)] });
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      check(args.document, args.variableValues, setResultAndStopExecution);
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      check(args.document, args.variableValues, setResultAndStopExecution);
    },
  };
}

type Problem = { param?: string; message: string };

/** Nesting deeper than any input type of the schema: refused before it is walked any further. */
export const MAX_VARIABLE_DEPTH = 32;

/** Walks the variables without recursion (hostile nesting cannot overflow the stack). */
function inVariables(variables: unknown): Problem | undefined {
  const pending: { value: unknown; path: string; depth: number }[] = [{ value: variables, path: "", depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value, path, depth } = next;
    if (typeof value === "string") {
      const problem = textProblem(value);
      if (problem) return { param: path || undefined, message: `${lastSegment(path)} ${problem}` };
    } else if (value && typeof value === "object") {
      if (depth >= MAX_VARIABLE_DEPTH) return { param: path || undefined, message: `variables must not be nested more than ${MAX_VARIABLE_DEPTH} levels deep` };
      for (const [key, nested] of Object.entries(value)) {
        const keyProblem = textProblem(key);
        if (keyProblem) return { param: path || undefined, message: `A variable's key ${keyProblem}` };
        pending.push({ value: nested, path: path ? `${path}.${key}` : key, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

/** Documents are parsed once and cached (yoga's parser cache, the REST table), so their verdict is too. */
const literalVerdicts = new WeakMap<DocumentNode, { problem?: Problem }>();

function inLiterals(document: DocumentNode): Problem | undefined {
  let verdict = literalVerdicts.get(document);
  if (!verdict) {
    verdict = { problem: firstLiteralProblem(document) };
    literalVerdicts.set(document, verdict);
  }
  return verdict.problem;
}

function firstLiteralProblem(document: DocumentNode): Problem | undefined {
  let found: Problem | undefined;
  visit(document, {
    StringValue(node) {
      const problem = textProblem(node.value);
      if (problem && !found) found = { message: `A string argument ${problem}` };
    },
  });
  return found;
}

const lastSegment = (path: string) => path.split(".").pop() || "text";
