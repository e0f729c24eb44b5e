import { isAsyncIterable, type Plugin } from "graphql-yoga";
import { AppError } from "../errors.js";
import { authenticationOf, type Services } from "../graphql/context.js";
import { maskError } from "../graphql/errors.js";
import type { Logger } from "../logger.js";
import type { TransportContext } from "../caller/request-info.js";

export type StreamLimits = { perIp: number; perClient: number };

/**
 * Live streams open on this instance (websocket connections and SSE subscriptions together), per
 * address and per client, so that neither transport is a way around the other's cap.
 */
export class OpenStreams {
  private readonly perIp = new Counter();
  private readonly perClient = new Counter();

  constructor(private readonly limits: StreamLimits) {}

  hasRoomForIp(ip: string): boolean {
    return this.perIp.count(ip) < this.limits.perIp;
  }

  hasRoomForClient(clientId: string): boolean {
    return this.perClient.count(clientId) < this.limits.perClient;
  }

  /** Counts a stream of this address; the returned function uncounts it (once). */
  openForIp(ip: string): () => void {
    return this.perIp.hold(ip);
  }

  openForClient(clientId: string): () => void {
    return this.perClient.hold(clientId);
  }
}

/**
 * SSE subscriptions count against the same caps as websockets (which count themselves when they
 * connect), until their stream ends (yoga ends it when the caller hangs up).
 */
export function useSseStreamCaps(deps: { streams: OpenStreams; services: Services; logger: Logger }): Plugin<TransportContext> {
  return {
    async onSubscribe({ args, setResultAndStopExecution }) {
      const scope = args.contextValue;
      if (scope.requestInfo.transport !== "graphql-http") return;
      const { clientId } = await authenticationOf(scope, deps.services);
      const { ip } = scope.requestInfo;
      if (!deps.streams.hasRoomForIp(ip) || !deps.streams.hasRoomForClient(clientId)) {
        const error = new AppError("RATE_LIMITED", "Too many open streams; close one first", { retryAfter: 60 });
        setResultAndStopExecution({ errors: [maskError(error, deps.logger)] });
        return;
      }
      const holds = [deps.streams.openForIp(ip), deps.streams.openForClient(clientId)];
      const release = () => holds.forEach((done) => done());
      return {
        onSubscribeResult({ result }) {
          if (!isAsyncIterable(result)) return release();
          return { onEnd: release };
        },
      };
    },
  };
}

/** Open streams per key (an address, a client). */
class Counter {
  private readonly counts = new Map<string, number>();

  count(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  hold(key: string): () => void {
    this.counts.set(key, this.count(key) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = this.count(key) - 1;
      if (left > 0) this.counts.set(key, left);
      else this.counts.delete(key);
    };
  }
}
