import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deployToken, liveBaseEnv, startAnvil, testCustody, type Anvil } from "./support/chain.js";
import { REQUIREMENTS, needs } from "./support/requirements.js";
import { startServerProcess, type ServerProcess } from "./support/server-process.js";
import { testDatabaseUrl } from "./support/server.js";
import { until } from "./support/until.js";
import { patient } from "./support/patience.js";

/**
 * WEB_CONCURRENCY=2 with a live network: every worker runs the network's watcher and sender (one
 * of each holds the lease), and one scrape aggregates the workers' registries. A network's gauges
 * describe the network, not a worker: they must read as one instance would, never their sum.
 */
describe("chain gauges under a cluster (WEB_CONCURRENCY=2)", needs(REQUIREMENTS.postgres), () => {
  let anvil: Anvil;
  let server: ServerProcess;

  beforeAll(async () => {
    anvil = await startAnvil();
    const token = await deployToken(anvil);
    await anvil.setBalance(testCustody(31).treasury, 10n ** 18n);
    server = await startServerProcess({
      ...liveBaseEnv(anvil, token),
      DATABASE_URL: testDatabaseUrl!,
      WEB_CONCURRENCY: "2",
      CUSTODIAN_MASTER_KEY: testCustody(31).masterKey,
    });
  }, patient(200_000));
  afterAll(async () => {
    await server?.stop();
    await anvil?.stop();
  });

  /** One scrape on a connection of its own (the cluster hands connections to the workers in turn). */
  const scrape = () =>
    new Promise<string>((resolve, reject) => {
      const req = request(`${server.url}/metrics`, { agent: false }, (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve(text));
      });
      req.on("error", reject).end();
    });
  const gauge = (text: string, name: string, labels = 'network="BASE"') => {
    const match = new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, "m").exec(text);
    return match ? Number(match[1]) : undefined;
  };

  it("chain_rpc_up reads 1, and the synced block and treasury balance are one network's, whichever worker is scraped", async () => {
    await anvil.mine(5);
    const head = Number(await anvil.client.getBlockNumber());
    // Both workers have passed (each set its own RPC gauge) and the holder has caught up.
    await until(async () => {
      const text = await scrape();
      return gauge(text, "chain_synced_block") === head && gauge(text, "chain_treasury_native_balance") !== undefined;
    }, "the watcher to reach the head");
    for (let i = 0; i < 4; i++) {
      const text = await scrape();
      expect(gauge(text, "chain_rpc_up")).toBe(1);
      expect(gauge(text, "chain_head_block")).toBe(head);
      expect(gauge(text, "chain_synced_block")).toBe(head);
      expect(gauge(text, "chain_lag_blocks")).toBe(0);
      expect(gauge(text, "chain_treasury_native_balance")).toBe(1);
    }
  }, patient(60_000));
});
