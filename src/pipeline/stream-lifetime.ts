import { isAsyncIterable, type Plugin } from "graphql-yoga";
import type { CredentialWatch } from "../auth/credential-watch.js";
import { authenticationOf } from "../graphql/context.js";
import type { Services } from "../services.js";
import type { TransportContext } from "./request-info.js";

/**
 * A subscription (over SSE or a websocket) ends when the credential it was opened with is revoked,
 * logged out or expires: its stream completes within the watch's sweep interval.
 */
export function useStreamLifetime(deps: { watch: CredentialWatch; services: Services }): Plugin<TransportContext> {
  return {
    onSubscribe({ args }) {
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) return;
          const stream = untilEnded(result);
          authenticationOf(args.contextValue, deps.services).then(
            (credential) => stream.endWith((end) => deps.watch.watch(credential, end)),
            () => stream.end(),
          );
          setResult(stream);
        },
      };
    },
  };
}

type EndableStream<T> = AsyncIterableIterator<T> & {
  /** Ends the stream now: a pending `next` resolves done and the source is closed. */
  end(): void;
  /** Lets `start` end the stream later; what it returns is called when the stream finishes either way. */
  endWith(start: (end: () => void) => () => void): void;
};

function untilEnded<T>(source: AsyncIterable<T>): EndableStream<T> {
  const iterator = source[Symbol.asyncIterator]();
  let finished = false;
  let cleanUp = () => {};
  let signalEnd = () => {};
  const ended = new Promise<IteratorReturnResult<undefined>>((resolve) => {
    signalEnd = () => resolve({ done: true, value: undefined });
  });
  const finish = async (): Promise<IteratorReturnResult<undefined>> => {
    if (!finished) {
      finished = true;
      signalEnd();
      cleanUp();
      await iterator.return?.();
    }
    return { done: true, value: undefined };
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      if (finished) return { done: true, value: undefined };
      const next = await Promise.race([iterator.next(), ended]);
      if (next.done) await finish();
      return next;
    },
    return: finish,
    async throw(error: unknown) {
      await finish();
      throw error;
    },
    end: () => void finish(),
    endWith(start) {
      if (finished) return;
      cleanUp = start(() => void finish());
    },
  };
}
