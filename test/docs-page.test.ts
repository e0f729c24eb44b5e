import { readFileSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, needs, REQUIREMENTS } from "./support/requirements.js";
import { createUser, errorCodes, gql } from "./support/http.js";
import { SHARED_SECRETS } from "./support/server-process.js";
import { newTenant, startServer, type TestServer } from "./support/server.js";
import { patient } from "./support/patience.js";

/** Flags that keep the browser itself from calling home, so every request seen is the page's own. */
const QUIET_BROWSER = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("GET /graphql/schema.graphql", () => {
  it("serves the printed schema, the same text as schema.graphql", async () => {
    const res = await fetch(`${server.url}/graphql/schema.graphql`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await res.text()).toBe(readFileSync(new URL("../schema.graphql", import.meta.url), "utf8"));
  });
});

describe("GET /graphql from a browser: GraphiQL's first screen", () => {
  /** The options the page hands to GraphiQL (yoga writes them into the page as JSON). */
  async function graphiqlOptions() {
    const res = await fetch(`${server.url}/graphql`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    const page = await res.text();
    const options = /renderYogaGraphiQL\(\s*window\.document\.querySelector\('#root'\),\s*(\{.*\}),\s*\);/s.exec(page)?.[1];
    expect(options, "the page renders GraphiQL with its options").toBeDefined();
    return JSON.parse(options!) as { defaultQuery?: string; headers?: string };
  }

  it("opens on a headers template for the key and an example query that runs once the key is filled in", async () => {
    const { defaultQuery, headers } = await graphiqlOptions();
    expect(JSON.parse(headers!)).toEqual({ "x-api-key": "" });
    expect(defaultQuery).toMatch(/query FirstUsers/);
    const tenant = await newTenant(server);
    await createUser(server, tenant);
    const withoutKey = await gql(server, defaultQuery!);
    expect(errorCodes(withoutKey)).toEqual(["UNAUTHENTICATED"]);
    const withKey = await gql(server, defaultQuery!, {}, JSON.parse(headers!.replace('""', JSON.stringify(tenant.apiKey))));
    expect(withKey.body.errors).toBeUndefined();
    expect(withKey.body.data.users).toHaveLength(1);
  });
});

/** Production as an operator configures it (NODE_ENV=production: GraphiQL, introspection and the sandbox off), on the test database. */
const PRODUCTION_ENV = {
  NODE_ENV: "production",
  ...SHARED_SECRETS,
  CUSTODIAN_MASTER_KEY: "xprv9s21ZrQH143K3GJpoapnV8SFfukcVBSfeCficPSGfubmSFDxo1kuHnLisriDvSnRRuL2Qrg5ggqHKNVpxR86QEC8w35uxmGoggxtQTPvfUu",
  SMTP_URL: "smtp://127.0.0.1:1",
  METRICS_TOKEN: "m".repeat(16),
};

describe("/docs links only to what the server serves", () => {
  /** The nav's links, each fetched as a browser follows it. */
  async function links(on: TestServer) {
    const page = await (await fetch(`${on.url}/docs`)).text();
    const hrefs = [...page.matchAll(/<a href="([^"]+)">/g)].map(([, href]) => href);
    const statuses = await Promise.all(hrefs.map(async (href) => (await fetch(`${on.url}${href}`, { headers: { accept: "text/html" } })).status));
    return Object.fromEntries(hrefs.map((href, i) => [href, statuses[i]]));
  }

  it("in development: GraphiQL, the schema and the OpenAPI document, each answering 200", async () => {
    expect(await links(server)).toEqual({ "/graphql": 200, "/graphql/schema.graphql": 200, "/v1/openapi.json": 200 });
  });

  describe("in production", needs(REQUIREMENTS.postgres), () => {
    let production: TestServer;
    beforeAll(async () => {
      production = await startServer({ env: PRODUCTION_ENV });
    });
    afterAll(() => production?.stop());

    it("the OpenAPI document only: GraphiQL is off and the schema unpublished (introspection off), and no page names them", async () => {
      expect(await links(production)).toEqual({ "/v1/openapi.json": 200 });
      expect((await fetch(`${production.url}/graphql/schema.graphql`)).status).toBe(404);
      const document = await (await fetch(`${production.url}/v1/openapi.json`)).text();
      expect(document).not.toContain("/graphql/schema.graphql");
    });

    it("the OpenAPI document says what a sandbox helper answers with the sandbox off: it lists none, and each is 404", async () => {
      const document = await (await fetch(`${production.url}/v1/openapi.json`)).json();
      expect(Object.keys(document.paths).filter((path) => path.startsWith("/v1/sandbox/"))).toEqual([]);
      expect(JSON.stringify(document)).not.toMatch(/sandbox (helper )?with the sandbox off|SANDBOX is off/i);
      const tenant = await newTenant(production);
      const helper = await fetch(`${production.url}/v1/sandbox/deposits`, { method: "POST", headers: { ...tenant.headers, "content-type": "application/json" }, body: "{}" });
      expect(helper.status).toBe(404);
    });
  });
});

describe("the developer pages in headless Chromium", needs(REQUIREMENTS.chromium), () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: QUIET_BROWSER });
  });
  afterAll(() => browser?.close());

  /** A page whose every request (its workers' included) is recorded; the check is that all stay on this server. */
  async function openPage(path: string) {
    const context = await browser.newContext();
    const requested: string[] = [];
    const errors: string[] = [];
    context.on("request", (request) => requested.push(request.url()));
    const page = await context.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(`${server.url}${path}`);
    const origin = new URL(server.url).origin;
    const elsewhere = () => requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:") && !url.startsWith(`blob:${origin}/`));
    return { page, requested, errors, elsewhere, origin };
  }

  /**
   * The page has asked for everything it will: no new request for a second (at most 20 s of waiting).
   * Not Playwright's "networkidle", which a single long-lived request (a worker's, a stream's) can hold
   * off past any time-out on a loaded machine, while what matters here is every request the page makes.
   */
  async function settled(requested: string[]) {
    const deadline = Date.now() + patient(20_000);
    let seen = -1;
    while (seen !== requested.length && Date.now() < deadline) {
      seen = requested.length;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  it("/docs lists every path of the REST contract and links to GraphiQL and the schema, asking nothing of another host", { timeout: patient(60_000) }, async () => {
    const { page, requested, elsewhere, origin } = await openPage("/docs");
    await page.locator(".opblock").first().waitFor({ timeout: patient(20_000) });
    await settled(requested);

    const listed = await page.locator(".opblock-summary-path").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-path")));
    const contract = readFileSync(new URL("../docs/contract/rest-v1.md", import.meta.url), "utf8");
    const shape = (path: string) => path.replace(/\{\w+\}/g, "{}");
    const contractPaths = new Set([...contract.matchAll(/\b(?:GET|POST|DELETE)\b[\s|]*(\/v1\/[\w{}/-]+)/g)].map(([, path]) => shape(path)));
    expect([...contractPaths].filter((path) => !listed.some((shown) => shown && shape(shown) === path))).toEqual([]);

    const links = await page.locator("nav a").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("href")));
    expect(links).toEqual(expect.arrayContaining(["/graphql", "/graphql/schema.graphql", "/v1/openapi.json"]));

    expect(elsewhere()).toEqual([]);
    expect(requested).toContain(`${origin}/v1/openapi.json`);
  });

  it("/graphql renders GraphiQL, which loads the schema from this server, asking nothing of another host", { timeout: patient(60_000) }, async () => {
    const { page, requested, errors, elsewhere, origin } = await openPage("/graphql");
    const introspection = await page.waitForResponse((response) => response.url() === `${origin}/graphql` && response.request().method() === "POST", { timeout: patient(20_000) });
    expect(introspection.status()).toBe(200);
    expect(await introspection.text()).toContain('"__schema"');
    // The query editor (Monaco, run in the page's own blob: workers) shows the example query.
    await page.locator(".graphiql-query-editor").getByText("FirstUsers").first().waitFor({ timeout: patient(20_000) });
    await settled(requested);

    expect(await page.title()).toBe("Fintech Platform API");
    expect(errors).toEqual([]);
    expect(elsewhere()).toEqual([]);
    expect(requested[0]).toBe(`${origin}/graphql`);
  });
});
