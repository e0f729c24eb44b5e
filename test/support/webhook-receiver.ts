import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { patient } from "./patience.js";

export type Received = { headers: IncomingHttpHeaders; body: string; at: number };
/** What the receiver does with its n-th request (0-based): answer with a status, or never answer. */
export type Reply = (n: number, request: Received) => number | "hang" | Promise<number>;

/** A real HTTP receiver on 127.0.0.1 (port 0) recording every request it gets. */
export async function startReceiver(reply: Reply = () => 200) {
  const received: Received[] = [];
  const hanging = new Set<import("node:http").ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      const pending = reply(received.length, request);
      received.push(request);
      const answer = await pending;
      if (answer === "hang") hanging.add(res);
      else res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    /** Waits until `count` requests have arrived (or the time is up), then returns them. */
    async waitFor(count: number, timeoutMs = 15_000) {
      const deadline = Date.now() + patient(timeoutMs);
      while (received.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      return received;
    },
    /** Waits until `count` distinct webhook-ids have arrived (deliveries are at-least-once), then returns the requests. */
    async waitForMessages(count: number, timeoutMs = 20_000) {
      const deadline = Date.now() + patient(timeoutMs);
      while (new Set(received.map((r) => r.headers["webhook-id"])).size < count && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return received;
    },
    close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
