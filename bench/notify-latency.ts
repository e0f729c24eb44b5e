// The raw transport floor under live deposit updates: one pg connection NOTIFYs, another LISTENs.
import pg from "pg";
import { Arrivals } from "./arrivals.js";
import { mapConcurrent, range } from "./drive.js";

/** Milliseconds from sending each NOTIFY to hearing it on the listening connection. */
export async function notifyRoundTrips(databaseUrl: string, options: { count: number; concurrency: number; warmUp: number }): Promise<number[]> {
  const channel = `bench_latency_${process.pid}`;
  const arrivals = new Arrivals();
  const listener = new pg.Client({ connectionString: databaseUrl });
  const notifiers = new pg.Pool({ connectionString: databaseUrl, max: options.concurrency });
  try {
    await listener.connect();
    listener.on("notification", (message) => arrivals.arrived(message.payload ?? ""));
    await listener.query(`LISTEN ${channel}`);
    const roundTrip = async (key: string) => {
      const arrival = arrivals.wait(key);
      const start = performance.now();
      await notifiers.query("SELECT pg_notify($1, $2)", [channel, key]);
      return (await arrival) - start;
    };
    await mapConcurrent(range(options.warmUp), options.concurrency, (i) => roundTrip(`warm-${i}`));
    return await mapConcurrent(range(options.count), options.concurrency, (i) => roundTrip(`${i}`));
  } finally {
    await listener.end();
    await notifiers.end();
  }
}
