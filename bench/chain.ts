// The on-chain rail against a real node (anvil, from @foundry-rs/anvil), on the bench database:
//   detection: a token transfer mined → its PENDING deposit at a graphql-ws subscriber (p50/p99), one
//     transfer every 50 ms, with CHAIN_POLL_MS as set;
//   scan: 100,000 custodial addresses, 10,000 blocks holding 2,000 transfers (1,000 to custodial
//     addresses), scanned from cold by a server started after them: time to all PENDING, blocks/s,
//     logs/s, the watcher's database round trips per block, and the server's heap;
//   sends: many USDC withdrawals requested at once, sent by the treasury (bench/chain-sends.ts).
import { randomBytes } from "node:crypto";
import { createClient } from "graphql-ws";
import { getAddress, type Address } from "viem";
import WebSocket from "ws";
import { deployToken, startAnvil, type Anvil, type Token } from "../test/support/chain.js";
import { startApp } from "./app-server.js";
import { Arrivals } from "./arrivals.js";
import { benchSends, sendsSection } from "./chain-sends.js";
import type { Started } from "./processes.js";
import { markdownTable, ms, percentile, section } from "./report.js";
import { newClient, withDatabase } from "./setup.js";

export type ChainBenchOptions = { databaseUrl: string; transfers: number; pollMs: number; addresses: number; blocks: number; scanTransfers: number; sends: number };

const METRICS_TOKEN = randomBytes(24).toString("hex");
const randomAddress = () => getAddress(`0x${randomBytes(20).toString("hex")}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Users with custodial wallets for a fresh client, written in bulk (the derivation is the custodian's business; any address does). */
async function custodialAddresses(databaseUrl: string, count: number): Promise<{ apiKey: string; addresses: Address[] }> {
  return withDatabase(databaseUrl, async (db) => {
    const { apiKey, clientId } = await newClient(db.prisma, "test");
    const addresses = Array.from({ length: count }, randomAddress);
    for (let start = 0; start < count; start += 10_000) {
      const batch = addresses.slice(start, start + 10_000);
      await db.sql.query(
        "bench_chain_wallets",
        `WITH u AS (
           INSERT INTO "users" ("id", "clientId", "email", "firstName", "lastName", "phoneNumber", "dob", "createdAt", "updatedAt")
           SELECT gen_random_uuid(), $1::uuid, 'chain-' || a || '@example.com', 'Bench', 'User', '+14155552671', '1990-01-01', now(), now() FROM unnest($2::text[]) AS a
           RETURNING "id", "email")
         INSERT INTO "wallets" ("id", "userId", "clientId", "walletId", "addressId", "address", "blockchain", "createdAt", "updatedAt")
         SELECT gen_random_uuid(), u."id", $1::uuid, 'wal_' || md5(u."email"), 'adr_' || md5(u."email"), substring(u."email" from 7 for 42), 'ETHEREUM', now(), now() FROM u`,
        [clientId, batch],
      );
    }
    return { apiKey, addresses };
  });
}

function chainEnv(anvil: Anvil, token: Token, extra: Record<string, string>) {
  return { CHAIN_RPC_URL_BASE: anvil.url, CHAIN_TOKEN_BASE_USDC: token.address, CHAIN_CONFIRMATIONS_BASE: "99999", METRICS_TOKEN, ...extra };
}

async function metric(app: Started, name: string): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name}{network="BASE"}`) || l.startsWith(`${name} `));
  // A labelled counter has no line before its first increment: that is 0.
  return line ? Number(line.split(" ").at(-1)) : 0;
}

async function detection(options: ChainBenchOptions, anvil: Anvil, token: Token, sender: Address) {
  const { apiKey, addresses } = await custodialAddresses(options.databaseUrl, 20);
  const app = await startApp(options.databaseUrl, chainEnv(anvil, token, { CHAIN_POLL_MS: String(options.pollMs) }));
  const arrivals = new Arrivals();
  const client = createClient({ url: `${app.url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, connectionParams: { "x-api-key": apiKey } });
  client.subscribe(
    { query: "subscription { depositUpdated { status transactionHash } }" },
    {
      next: ({ data, errors }) => {
        if (errors) return void process.stderr.write(`subscription error: ${JSON.stringify(errors)}\n`);
        const deposit = (data as { depositUpdated: { transactionHash: string; status: string } }).depositUpdated;
        arrivals.arrived(`${deposit.transactionHash}:${deposit.status}`);
      },
      error: (err) => process.stderr.write(`subscription ended: ${JSON.stringify(err)}\n`),
      complete: () => undefined,
    },
  );
  try {
    // The subscription is live once a first transfer's update arrives.
    for (let attempt = 0; ; attempt++) {
      const hash = await token.transfer(sender, addresses[0], 1n);
      if (await arrivals.wait(`${hash}:PENDING`, options.pollMs * 3 + 2000).then(() => true, () => false)) break;
      if (attempt > 10) throw new Error("no PENDING update at the subscriber");
    }
    const waits: Promise<number>[] = [];
    for (let i = 0; i < options.transfers; i++) {
      // anvil's automine answers eth_sendTransaction once the block is mined: that moment is "mined".
      const before = performance.now();
      const hash = await token.transfer(sender, addresses[i % addresses.length], BigInt(1_000_000 + i));
      const mined = performance.now();
      waits.push(arrivals.wait(`${hash}:PENDING`, 60_000).then((at) => at - mined));
      await sleep(Math.max(0, 50 - (mined - before)));
    }
    return await Promise.all(waits);
  } finally {
    await client.dispose();
    await app.stop();
  }
}

async function scan(options: ChainBenchOptions, anvil: Anvil, token: Token, sender: Address) {
  const made = performance.now();
  const { addresses } = await custodialAddresses(options.databaseUrl, options.addresses);
  const addressesMs = performance.now() - made;
  const first = (await anvil.client.getBlockNumber()) + 1n;
  // 2,000 transfers, half to custodial addresses, 10 per block in 200 blocks spread over the range.
  const perBlock = 10;
  const carriers = options.scanTransfers / perBlock;
  const gap = Math.floor(options.blocks / carriers) - 1;
  let custodial = 0;
  for (let i = 0; i < carriers; i++) {
    const to = Array.from({ length: perBlock }, (_, j) => ((i * perBlock + j) % 2 === 0 ? addresses[(custodial++ * 97) % addresses.length] : randomAddress()));
    await token.transferMany(sender, to, to.map((_, j) => BigInt(1_000 + j)));
    if (gap > 0) await anvil.mine(gap);
  }
  const last = await anvil.client.getBlockNumber();
  const blocks = Number(last - first + 1n);
  const started = performance.now();
  const app = await startApp(options.databaseUrl, chainEnv(anvil, token, { CHAIN_POLL_MS: String(options.pollMs), CHAIN_START_BLOCK_BASE: first.toString() }));
  const listening = performance.now();
  try {
    const heapBefore = await metric(app, "nodejs_heap_size_used_bytes");
    let found = 0;
    while (found < custodial) {
      found = await metric(app, "chain_deposits_seen_total");
      if (performance.now() - listening > 120_000) throw new Error(`only ${found} of ${custodial} deposits after 2 minutes`);
      if (found < custodial) await sleep(20);
    }
    const seconds = (performance.now() - listening) / 1000;
    const calls = await metric(app, "chain_database_calls_total");
    const heapAfter = await metric(app, "nodejs_heap_size_used_bytes");
    return { addressesMs, blocks, logs: options.scanTransfers, custodial, seconds, startSeconds: (listening - started) / 1000, calls, heapBefore, heapAfter };
  } finally {
    await app.stop();
  }
}

/**
 * The sends on a new chain: the deposits of the parts before complete on the sends' server (3
 * confirmations) and their sweeps would take treasury nonces between the withdrawals measured.
 */
async function sendsOnAChainOfTheirOwn(options: ChainBenchOptions) {
  const anvil = await startAnvil();
  try {
    return await benchSends({ databaseUrl: options.databaseUrl, sends: options.sends, pollMs: options.pollMs }, anvil, await deployToken(anvil));
  } finally {
    await anvil.stop();
  }
}

export async function benchChain(options: ChainBenchOptions): Promise<string> {
  const anvil = await startAnvil();
  try {
    const token = await deployToken(anvil);
    const sender = anvil.accounts[1];
    await token.mint(sender, 10n ** 18n);
    const latencies = await detection(options, anvil, token, sender);
    const s = await scan(options, anvil, token, sender);
    const sent = await sendsOnAChainOfTheirOwn(options);
    const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
    return [
      section(
        `Chain detection: transfer mined → PENDING at a graphql-ws subscriber, ${options.transfers} transfers, CHAIN_POLL_MS=${options.pollMs} (target p99 ≤ ${options.pollMs + 250} ms)`,
        markdownTable(["p50 ms", "p99 ms", "max ms"], [[ms(percentile(latencies, 50)), ms(percentile(latencies, 99)), ms(Math.max(...latencies))]]),
      ),
      section(
        `Chain scan from cold: ${options.addresses} custodial addresses, ${s.blocks} blocks, ${s.logs} transfers (${s.custodial} to custodial addresses)`,
        markdownTable(
          ["time to all PENDING s", "blocks/s", "logs/s", "DB calls", "DB calls per block", "heap before MB", "heap after MB"],
          [[s.seconds.toFixed(2), Math.round(s.blocks / s.seconds), Math.round(s.logs / s.seconds), s.calls, (s.calls / s.blocks).toFixed(3), mb(s.heapBefore), mb(s.heapAfter)]],
        ),
        `Time from the server listening (process start to listening: ${s.startSeconds.toFixed(1)} s; writing the ${options.addresses} wallets: ${(s.addressesMs / 1000).toFixed(1)} s). ` +
          "The watcher holds no address set: recipients are matched by one `= ANY($1)` query per block range on the unique index of wallets.address.",
      ),
      sendsSection({ databaseUrl: options.databaseUrl, sends: options.sends, pollMs: options.pollMs }, sent),
    ].join("");
  } finally {
    await anvil.stop();
  }
}
