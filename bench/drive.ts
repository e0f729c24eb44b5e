/** Runs `work` over every item with at most `concurrency` in flight; results in item order. */
export async function mapConcurrent<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** `cpuSeconds`: this process's CPU time (user + system) during the run. */
export type Run = { transactions: number; seconds: number; cpuSeconds: number; latencies: number[] };

/** `workers` concurrent loops, each running `transaction(worker)` `perWorker` times back to back. */
export async function runWorkers(workers: number, perWorker: number, transaction: (worker: number) => Promise<void>): Promise<Run> {
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let i = 0; i < perWorker; i++) {
        const start = performance.now();
        await transaction(worker);
        latencies.push(performance.now() - start);
      }
    }),
  );
  const { user, system } = process.cpuUsage(cpu);
  return { transactions: workers * perWorker, seconds: (performance.now() - started) / 1000, cpuSeconds: (user + system) / 1e6, latencies };
}

export const range = (count: number) => Array.from({ length: count }, (_, i) => i);
