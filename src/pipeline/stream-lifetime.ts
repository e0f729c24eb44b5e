import type { ExecutionResult } from "graphql";
import { isAsyncIterable, type Plugin } from "graphql-yoga";
import { CREDENTIAL_ENDED_MESSAGES, type CredentialWatch } from "../auth/credential-watch.js";
import type { CredentialEnd } from "../auth/service.js";
import { AppError } from "../errors.js";
import { authenticationOf, type Services } from "../graphql/context.js";
import { ApiError, toApiError } from "../graphql/errors.js";
import type { TransportContext } from "../caller/request-info.js";

/**
 * A subscription (over SSE or a websocket) ends when the credential it was opened with is revoked,
 * logged out or expires, within the watch's sweep interval: its last result is an UNAUTHENTICATED
 * error saying why (`details.reason`: `revoked` or `expired`), then it completes. Over SSE that is an
 * `event: next` any GraphQL-over-SSE client hands to its `next`, before `event: complete`.
 */
export function useStreamLifetime(deps: { watch: CredentialWatch; services: Services }): Plugin<TransportContext> {
  return {
    onSubscribe({ args }) {
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) return;
          const stream = untilEnded(result as AsyncIterable<ExecutionResult>);
          const { requestId } = args.contextValue.requestInfo;
          authenticationOf(args.contextValue, deps.services).then(
            (credential) => stream.endWith((end) => deps.watch.watch(credential, (how) => end(credentialEnded(how, requestId)))),
            () => stream.end(),
          );
          setResult(stream);
        },
      };
    },
  };
}

/** The last result of a stream whose credential ended. */
function credentialEnded(how: CredentialEnd, requestId: string): ExecutionResult {
  const error = toApiError(new AppError("UNAUTHENTICATED", CREDENTIAL_ENDED_MESSAGES[how], { details: { reason: how } }), undefined, requestId);
  // One result among the stream's: there is no HTTP status left to set.
  const { http: _http, ...extensions } = error.extensions;
  return { errors: [new ApiError(error.message, { extensions })] };
}

type EndableStream<T> = AsyncIterableIterator<T> & {
  /** Ends the stream now: a pending `next` resolves done and the source is closed. */
  end(): void;
  /**
   * Lets `start` end the stream later, with a last result if given; what `start` returns is called
   * when the stream finishes either way.
   */
  endWith(start: (end: (last?: T) => void) => () => void): void;
};

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

function untilEnded<T>(source: AsyncIterable<T>): EndableStream<T> {
  const iterator = source[Symbol.asyncIterator]();
  let finished = false;
  let last: T | undefined;
  let cleanUp = () => {};
  let signalEnd = () => {};
  const ended = new Promise<undefined>((resolve) => {
    signalEnd = () => resolve(undefined);
  });
  const finish = async (lastResult?: T): Promise<IteratorReturnResult<undefined>> => {
    if (!finished) {
      finished = true;
      last = lastResult;
      signalEnd();
      cleanUp();
      await iterator.return?.();
    }
    return DONE;
  };
  /** The last result, once, then done. */
  const farewell = (): IteratorResult<T, undefined> => {
    if (last === undefined) return DONE;
    const value = last;
    last = undefined;
    return { done: false, value };
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (finished) return farewell();
      const next = await Promise.race([iterator.next(), ended]);
      if (!next) return farewell();
      if (next.done) await finish();
      return next;
    },
    return: () => finish(),
    async throw(error: unknown) {
      await finish();
      throw error;
    },
    end: () => void finish(),
    endWith(start) {
      if (finished) return;
      cleanUp = start((lastResult) => void finish(lastResult));
    },
  };
}
