import { createServer, type AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { rest } from "./support/http.js";
import { startMailbox, type Mailbox } from "./support/mailbox.js";
import { startServer, type TestServer } from "./support/server.js";

/** A loopback port nothing listens on: a connection to it is refused at once. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops) await stop();
});

const mailerLines = (server: TestServer) => server.logs.filter((line) => line.includes('"mailer":'));

describe("/readyz reports the mailer without failing on it, and the server logs its state once at start", () => {
  const cases: { name: string; smtpUrl: () => Promise<string | undefined>; state: "log" | "ok" | "unreachable"; level: number }[] = [
    { name: "no SMTP_URL: mail goes to the log", smtpUrl: async () => undefined, state: "log", level: 30 },
    {
      name: "an SMTP server that answers",
      smtpUrl: async () => {
        const mailbox: Mailbox = await startMailbox();
        stops.push(mailbox.close);
        return mailbox.smtpUrl;
      },
      state: "ok",
      level: 30,
    },
    { name: "an SMTP server that does not answer (a closed port)", smtpUrl: async () => `smtp://127.0.0.1:${await closedPort()}`, state: "unreachable", level: 40 },
  ];

  it.each(cases)("$name → mailer: $state", async ({ smtpUrl, state, level }) => {
    const url = await smtpUrl();
    const server = await startServer({ env: url ? { SMTP_URL: url } : {} });
    stops.push(server.stop);
    const ready = await rest(server, "GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready", database: "ok", mailer: state });
    await expect.poll(() => mailerLines(server).length).toBe(1);
    expect(JSON.parse(mailerLines(server)[0])).toMatchObject({ mailer: state, level });
    // Later probes report the same, and log nothing more.
    expect((await rest(server, "GET", "/readyz")).body.mailer).toBe(state);
    expect(mailerLines(server)).toHaveLength(1);
  });
});
