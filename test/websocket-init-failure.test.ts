import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { TRY_AGAIN_LATER } from "../src/gateway/websocket.js";
import { REQUIREMENTS, needs } from "./support/requirements.js";
import { newTenant, startServer, testDatabaseUrl, type Tenant, type TestServer } from "./support/server.js";
import { startTcpProxy, type TcpProxy } from "./support/tcp-proxy.js";
import { until } from "./support/until.js";

/**
 * A graphql-ws `connection_init` the server cannot check (PostgreSQL unreachable, through a proxy of
 * the test's own) is closed 1013, which a client retries, not 4403 ("forbidden", which it may not);
 * a credential the server refuses is still 4403, and once the database is back the same key connects.
 */
describe("a websocket connection_init while the database is down (PostgreSQL)", needs(REQUIREMENTS.postgres), () => {
  let server: TestServer;
  let proxy: TcpProxy;
  let tenant: Tenant;

  beforeAll(async () => {
    const target = new URL(testDatabaseUrl!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const through = new URL(testDatabaseUrl!);
    through.hostname = "127.0.0.1";
    through.port = String(proxy.port);
    server = await startServer({ env: { DATABASE_URL: through.toString() } });
    tenant = await newTenant(server);
  }, 60_000);
  afterAll(async () => {
    await proxy?.restore().catch(() => undefined);
    await server?.stop();
    await proxy?.close();
  });

  /** How the server answers a connection_init with this key: acknowledged, or closed with a code and reason. */
  function init(apiKey: string): Promise<{ acked: true } | { code: number; reason: string }> {
    const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
    return new Promise((resolve, reject) => {
      socket.once("error", reject);
      socket.once("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: { "x-api-key": apiKey } })));
      socket.on("message", (data) => {
        if (JSON.parse(String(data)).type !== "connection_ack") return;
        socket.close();
        resolve({ acked: true });
      });
      socket.once("close", (code, reason) => resolve({ code, reason: String(reason) }));
    });
  }

  it("closes 1013 (retry) while it cannot check, 4403 for a refused key, and acknowledges once the database is back", { timeout: 60_000 }, async () => {
    expect(await init("fpk_unknown.key")).toMatchObject({ code: 4403 });
    await proxy.cut();
    try {
      // The tenant's key has never been checked: no cached credential can answer for the database.
      expect(await init(tenant.apiKey)).toEqual({ code: TRY_AGAIN_LATER, reason: "The server could not check the credential; try again later" });
    } finally {
      await proxy.restore();
    }
    await until(async () => "acked" in (await init(tenant.apiKey)), "the key connecting once the database is back");
  });
});
