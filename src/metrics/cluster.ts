import cluster from "node:cluster";
import { randomUUID } from "node:crypto";
import { AggregatorRegistry, type Registry } from "prom-client";

/**
 * With workers (WEB_CONCURRENCY > 1), one scrape reports the whole server: the worker a scrape
 * reaches asks the supervisor, which collects every worker's registry (prom-client's
 * `AggregatorRegistry`, over the cluster's IPC) and answers with their sum: counters and histograms
 * added up, gauges too (open websockets, pool connections), process metrics as prom-client
 * aggregates them. No `worker` label: a worker replaced takes its counts with it, as a restart does.
 */
const ASK = "fintech:metrics:ask";
const ANSWER = "fintech:metrics:answer";
/** Beyond prom-client's own 5 s wait for the workers. */
const ANSWER_TIMEOUT_MS = 10_000;

type Answer = { type: typeof ANSWER; id: string; text?: string; error?: string };

/** In the supervisor: answers the workers' requests for the whole server's metrics. */
export function aggregateWorkerMetrics() {
  const aggregator = new AggregatorRegistry();
  cluster.on("message", (worker, message: { type?: unknown; id?: unknown }) => {
    if (message?.type !== ASK || typeof message.id !== "string") return;
    const id = message.id;
    aggregator.clusterMetrics().then(
      (text): Answer => ({ type: ANSWER, id, text }),
      (error: Error): Answer => ({ type: ANSWER, id, error: error.message }),
    ).then((answer) => worker.isConnected() && worker.send(answer));
  });
}

/**
 * In a worker: offers `registry` to the supervisor's aggregation, and returns how to read the whole
 * server's metrics. Outside a cluster: undefined (the registry is the server's).
 */
export function clusterMetricsOf(registry: Registry): (() => Promise<string>) | undefined {
  if (!cluster.isWorker) return undefined;
  // Constructing one installs prom-client's worker side: it answers the supervisor's collection with these registries.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  const waiting = new Map<string, (answer: Answer) => void>();
  process.on("message", (message: Partial<Answer>) => {
    if (message?.type === ANSWER && typeof message.id === "string") waiting.get(message.id)?.(message as Answer);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = randomUUID();
      const timer = setTimeout(() => settle({ type: ANSWER, id, error: "the supervisor did not answer" }), ANSWER_TIMEOUT_MS);
      function settle(answer: Answer) {
        clearTimeout(timer);
        waiting.delete(id);
        if (answer.text !== undefined) resolve(answer.text);
        else reject(new Error(`Cluster metrics unavailable: ${answer.error}`));
      }
      waiting.set(id, settle);
      process.send!({ type: ASK, id });
    });
}
