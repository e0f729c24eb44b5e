// Where a server's CPU went, by layer: reads a V8 CPU profile (BENCH_CPU_PROFILE_DIR, or any
// `node --cpu-prof` output) and prints each layer's share of the busy samples of a window.
//   npx tsx bench/profile-layers.ts <file.cpuprofile> [seconds [requests per second]]
// `seconds`: only the samples of that many seconds before the profile's last one (less its final
// second, when the server was stopping): the measured load, without the start-up and warm-up. With
// the fixed rate the load ran at, each layer's CPU per request too (samples × the sampling interval).
// A sample counts for the layer of the nearest frame that belongs to a package or to our code;
// Node's own frames (http, net, streams) count for whoever called them.
import { readFileSync } from "node:fs";
import { markdownTable } from "./report.js";

type CallFrame = { functionName: string; url: string };
type ProfileNode = { id: number; callFrame: CallFrame; children?: number[] };
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };

/** Layers by package name, first match wins; a package matching none is a layer of its own. */
const LAYERS: [layer: string, packages: RegExp][] = [
  ["Express, its router and middleware", /^(express|router|body-parser|raw-body|cors|finalhandler|type-is|content-type|media-typer|forwarded|proxy-addr|ipaddr\.js|accepts|negotiator|on-finished|parseurl|path-to-regexp|qs|iconv-lite|statuses|http-errors|vary|encodeurl|bytes|depd|debug|ms)$/],
  ["GraphQL: graphql-js, yoga, envelop, the executor", /^(graphql|graphql-yoga|@graphql-yoga\/(?!plugin-prometheus).*|@envelop\/(?!prometheus).*|@graphql-tools\/.*|@whatwg-node\/.*|@escape\.tech\/.*|lru-cache|@repeaterjs\/repeater|dset)$/],
  ["Pothos (+ plugin-prisma's selection mapping)", /^@pothos\//],
  ["pg, the PostgreSQL driver", /^(pg|pg-protocol|pg-pool|pg-types|postgres-.+|pg-cloudflare)$/],
  ["pino (log lines)", /^(pino|sonic-boom|pino-std-serializers|@pinojs\/.*|quick-format-unescaped|safe-stable-stringify)$/],
  ["metrics (prom-client, the GraphQL metrics plugin)", /^(prom-client|@graphql-yoga\/plugin-prometheus|@envelop\/prometheus|bintrees|tdigest)$/],
  ["Prisma", /^@prisma\//],
];

const SYSCALL_WRITES = new Set(["writev", "writeBuffer", "writeUtf8String", "writeLatin1String"]);
const NOT_BUSY = new Set(["(idle)", "(program)"]);

function layerOf(frame: CallFrame): string | undefined {
  const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1];
  if (name) return LAYERS.find(([, packages]) => packages.test(name))?.[0] ?? `package ${name}`;
  if (frame.url.includes("/dist/") || frame.url.includes("/src/")) return "our code";
  return undefined; // Node's own (node:…) or native: the caller's layer
}

/** Busy samples by layer, and the mean sampling interval in µs. */
function layerShares(profile: Profile, seconds?: number): { shares: Map<string, number>; intervalMicros: number } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const times: number[] = [];
  let time = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((time += delta));
  const end = times[times.length - 1] - (seconds === undefined ? 0 : 1e6);
  const start = seconds === undefined ? -Infinity : end - seconds * 1e6;

  const shares = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    if (times[i] < start || times[i] > end) return;
    const own = nodes.get(id)!.callFrame;
    if (NOT_BUSY.has(own.functionName)) return;
    let layer: string | undefined;
    if (SYSCALL_WRITES.has(own.functionName)) layer = "socket writes (the syscall, with loopback TCP delivery)";
    else if (own.functionName === "(garbage collector)") layer = "garbage collection";
    for (let at: number | undefined = id; !layer && at !== undefined; at = parents.get(at)) layer = layerOf(nodes.get(at)!.callFrame);
    layer ??= "Node itself (http, net, streams, microtasks)";
    shares.set(layer, (shares.get(layer) ?? 0) + 1);
  });
  return { shares, intervalMicros: (times[times.length - 1] - profile.startTime) / profile.samples.length };
}

function main() {
  const [file, seconds, rate] = process.argv.slice(2);
  if (!file) throw new Error("usage: npx tsx bench/profile-layers.ts <file.cpuprofile> [seconds [requests per second]]");
  const { shares, intervalMicros } = layerShares(JSON.parse(readFileSync(file, "utf8")) as Profile, seconds === undefined ? undefined : Number(seconds));
  const busy = [...shares.values()].reduce((sum, count) => sum + count, 0);
  const requests = seconds !== undefined && rate !== undefined ? Number(seconds) * Number(rate) : undefined;
  const perRequest = (count: number) => (requests ? [Math.round((count * intervalMicros) / requests)] : []);
  const rows = [...shares].sort((a, b) => b[1] - a[1]).map(([layer, count]) => [layer, `${((100 * count) / busy).toFixed(1)} %`, ...perRequest(count)]);
  const head = ["layer", "share of busy samples", ...(requests ? ["µs per request"] : [])];
  const total = requests ? ["all", "100 %", ...perRequest(busy)] : [];
  process.stdout.write(`${busy} busy samples\n\n${markdownTable(head, [...rows, ...(requests ? [total] : [])])}\n`);
}

main();
