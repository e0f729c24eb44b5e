import autocannon from "autocannon";

export type LoadResult = { name: string; requestsPerSecond: number; p50: number; p99: number; errors: number; unexpected: number };

export type LoadTarget = {
  name: string;
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** The status every response should have (default: any 2xx); others count as errors. */
  expectStatus?: number;
};

/** Drives one target with `connections` concurrent keep-alive clients for `seconds` (at most `rate` requests/s in all, when given). */
export async function load(target: LoadTarget, options: { connections: number; seconds: number; rate?: number }): Promise<LoadResult> {
  const result = await autocannon({
    url: target.url,
    method: target.method ?? "GET",
    headers: target.headers,
    body: target.body,
    connections: options.connections,
    duration: options.seconds,
    overallRate: options.rate,
  });
  return {
    name: target.name,
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    unexpected: target.expectStatus === undefined ? result.non2xx : unexpectedResponses(result, target.expectStatus),
  };
}

function unexpectedResponses(result: autocannon.Result, status: number): number {
  const expected = result.statusCodeStats?.[`${status}`]?.count ?? 0;
  return result.requests.total - expected;
}
