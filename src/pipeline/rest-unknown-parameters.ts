import type { Plugin } from "graphql-yoga";
import { AppError } from "../errors.js";
import { maskError } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import type { TransportContext } from "../caller/request-info.js";

/**
 * A /v1 request with a query parameter or body field its route does not document (the router names
 * it, src/rest/request-fields.ts) is refused before anything runs, as Stripe refuses one:
 * `400 {error: "Received unknown parameter: nope", code: "BAD_USER_INPUT", param: "nope"}`. After
 * admission, so a caller without a valid credential hears 401 and a flood draws on the budgets.
 */
export function useRestUnknownParameters(logger: Logger): Plugin<TransportContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const name = args.contextValue.requestInfo.unknownParameter;
      if (name === undefined) return;
      setResultAndStopExecution({ errors: [maskError(new AppError("BAD_USER_INPUT", `Received unknown parameter: ${name}`, { param: name }), logger)] });
    },
  };
}
