import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newVirtualAccount } from "./support/deposits.js";
import { createUser, rest } from "./support/http.js";
import { craftSessionToken } from "./support/pipeline.js";
import { CHROMIUM, needs, REQUIREMENTS } from "./support/requirements.js";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { settle } from "./support/subscriptions.js";

const QUIET_BROWSER = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const DEPOSIT_UPDATED = "subscription { depositUpdated { id status eventCursor } }";
/** The documented browser client, as a page would load it. */
const CLIENT = readFileSync(new URL("../examples/browser-sse.js", import.meta.url), "utf8");

type Seen = { received: { result: { data?: { depositUpdated: { id: string; status: string; eventCursor: string } }; errors?: unknown[] }; id?: string }[]; ended?: unknown };
type BrowserWindow = Window & typeof globalThis & {
  seen: Seen;
  stop(): void;
  subscribe(options: Record<string, unknown>): () => void;
};

let server: TestServer;
/** Another origin serving a page that loads the client: the API is called cross-origin, as from an integrator's app. */
let app: Server;
let appUrl: string;
beforeAll(async () => {
  server = await startServer();
  app = createServer((req, res) => {
    if (req.url === "/browser-sse.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(CLIENT);
    res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><script type="module">import { subscribe } from "/browser-sse.js"; window.subscribe = subscribe;</script>`);
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  appUrl = `http://localhost:${(app.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => app?.close(resolve));
  await server?.stop();
});

describe("SSE from a browser, with examples/browser-sse.js", needs(REQUIREMENTS.chromium), () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: QUIET_BROWSER });
  });
  afterAll(() => browser?.close());

  /** Subscribes in the page, with the session token in a header; what arrives is kept in `window.seen`. */
  const subscribeIn = (page: Page, token: string, lastEventId?: string) =>
    page.evaluate(
      ({ url, query, token, lastEventId }) => {
        const window = globalThis as BrowserWindow;
        window.seen = { received: [] };
        window.stop = window.subscribe({
          url,
          query,
          headers: { "x-client-auth": token },
          lastEventId,
          onNext: (result: Seen["received"][number]["result"], id?: string) => window.seen.received.push({ result, id }),
          onEnd: (end: unknown) => (window.seen.ended = end),
        });
      },
      { url: `${server.url}/graphql`, query: DEPOSIT_UPDATED, token, lastEventId },
    );
  const seen = (page: Page) => page.evaluate(() => (globalThis as BrowserWindow).seen);
  const waitFor = (page: Page, condition: string) => page.waitForFunction(condition, undefined, { timeout: 10_000 });

  it("a page on another origin follows deposits with a session token in a header, resumes after a drop, and learns why its stream ended", async () => {
    const tenant = await newTenant(server);
    const userId = await createUser(server, tenant);
    await newVirtualAccount(server, tenant, userId, "ngn");
    const token = await craftSessionToken(server, tenant.clientId);
    const context = await browser.newContext();
    const requested: string[] = [];
    context.on("request", (request) => requested.push(request.url()));
    const page = await context.newPage();
    await page.goto(appUrl);
    await page.waitForFunction(() => typeof (globalThis as BrowserWindow).subscribe === "function");
    const deposit = async () => {
      const res = await rest(server, "POST", "/v1/sandbox/deposits", { headers: tenant.headers, body: { userId, currency: "NGN", amount: 100 } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };

    // Live: the update reaches the page, each with its SSE id (the event cursor).
    await subscribeIn(page, token);
    await settle();
    const first = await deposit();
    await waitFor(page, "globalThis.seen.received.length >= 1");
    const [live] = (await seen(page)).received;
    expect(live.result.data?.depositUpdated).toMatchObject({ id: first, status: "PENDING" });
    expect(live.id).toBe(live.result.data?.depositUpdated.eventCursor);

    // Dropped: a deposit made while the page is away is replayed when it comes back with the last id.
    await page.evaluate(() => (globalThis as BrowserWindow).stop());
    const missed = await deposit();
    await subscribeIn(page, token, live.id);
    await waitFor(page, "globalThis.seen.received.length >= 1");
    expect((await seen(page)).received[0].result.data?.depositUpdated).toMatchObject({ id: missed, status: "PENDING" });

    // Ended: logging the session out ends the stream with a last error that says why, then complete.
    expect((await rest(server, "POST", "/v1/client-auth/logout", { headers: { "x-client-auth": token } })).status).toBe(200);
    await waitFor(page, "globalThis.seen.ended !== undefined");
    const { received, ended } = await seen(page);
    expect(ended).toEqual({ complete: true });
    expect(received.at(-1)?.result.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: "UNAUTHENTICATED", details: { reason: "revoked" } }) })]);

    // The credential never travelled in a URL.
    expect(requested.filter((url) => url.includes(token))).toEqual([]);
    await context.close();
  });

  it("a refused credential ends the subscription with the refusal, without retrying", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(appUrl);
    await page.waitForFunction(() => typeof (globalThis as BrowserWindow).subscribe === "function");
    await subscribeIn(page, "not-a-session-token");
    await waitFor(page, "globalThis.seen.ended !== undefined");
    const { ended } = await seen(page);
    expect(ended).toMatchObject({ status: 401 });
    await page.context().close();
  });
});
