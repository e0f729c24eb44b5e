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
    const problem = inVariables(variables, "") ?? inLiterals(document);
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

function inVariables(value: unknown, path: string): Problem | undefined {
  if (typeof value === "string") {
    const problem = textProblem(value);
    return problem ? { param: path || undefined, message: `${lastSegment(path)} ${problem}` } : undefined;
  }
  if (value && typeof value === "object") {
    for (const [key, nested] of Object.entries(value)) {
      const problem = inVariables(key, path) ?? inVariables(nested, path ? `${path}.${key}` : key);
      if (problem) return problem;
    }
  }
  return undefined;
}

function inLiterals(document: DocumentNode): Problem | undefined {
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
