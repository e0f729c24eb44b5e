import { existsSync, readFileSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./support/server.js";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`${CHROMIUM} is absent: the /docs browser test is skipped (install Debian's chromium package to run it)`);

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

describe.skipIf(!hasChromium)("GET /docs in headless Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: QUIET_BROWSER });
  });
  afterAll(() => browser?.close());

  it("lists every path of the REST contract and links to GraphiQL and the schema, asking nothing of another host", async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    await page.goto(`${server.url}/docs`);
    await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
    await page.waitForLoadState("networkidle");

    const listed = await page.locator(".opblock-summary-path").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-path")));
    const contract = readFileSync(new URL("../docs/contract/rest-v1.md", import.meta.url), "utf8");
    const shape = (path: string) => path.replace(/\{\w+\}/g, "{}");
    const contractPaths = new Set([...contract.matchAll(/\b(?:GET|POST|DELETE)\b[\s|]*(\/v1\/[\w{}/-]+)/g)].map(([, path]) => shape(path)));
    expect([...contractPaths].filter((path) => !listed.some((shown) => shown && shape(shown) === path))).toEqual([]);

    const links = await page.locator("nav a").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("href")));
    expect(links).toEqual(expect.arrayContaining(["/graphql", "/graphql/schema.graphql", "/v1/openapi.json"]));

    const origin = new URL(server.url).origin;
    expect(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
    expect(requested).toContain(`${origin}/v1/openapi.json`);
  });
});
