import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Hex } from "viem";

/**
 * A JSON-RPC proxy over HTTP on a loopback port, in front of a node (anvil): it passes every request
 * through, and lets a test act at the moment a transaction is broadcast. JSON-RPC requests may come
 * one by one or batched in an array; a request is a broadcast when any call in it is
 * `eth_sendRawTransaction`.
 */
export type RpcProxy = {
  url: string;
  /**
   * Arms a trap for the next broadcast: `act` runs (a test kills the server there) either before the
   * request is forwarded, so the node never sees it ("before-forwarding"), or after the node answered,
   * before the answer is passed back ("before-answering"). The request's connection is then dropped,
   * its answer never given. Resolves, once `act` has finished, with the raw transactions it carried.
   */
  trapNextBroadcast(when: "before-forwarding" | "before-answering", act: () => Promise<void>): Promise<Hex[]>;
  close(): Promise<void>;
};

type Call = { method?: unknown; params?: unknown };
type Trap = { when: "before-forwarding" | "before-answering"; act: () => Promise<void>; sprung: (raw: Hex[]) => void; failed: (err: unknown) => void };

/** The raw transactions a request broadcasts (none: not a broadcast). */
function broadcastsIn(body: string): Hex[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const calls = (Array.isArray(parsed) ? parsed : [parsed]) as Call[];
  return calls.filter((call) => call?.method === "eth_sendRawTransaction" && Array.isArray(call.params)).map((call) => (call.params as Hex[])[0]);
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  let trap: Trap | undefined;
  const forward = async (body: string) => {
    const res = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body, signal: AbortSignal.timeout(10_000) });
    return { status: res.status, text: await res.text() };
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await bodyOf(req);
    const raw = broadcastsIn(body);
    const sprung = raw.length > 0 ? trap : undefined;
    if (sprung) {
      trap = undefined;
      try {
        if (sprung.when === "before-answering") await forward(body);
        await sprung.act();
        sprung.sprung(raw);
      } catch (err) {
        sprung.failed(err);
      }
      res.socket?.destroy();
      return;
    }
    const answer = await forward(body);
    res.writeHead(answer.status, { "content-type": "application/json" }).end(answer.text);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.socket?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    trapNextBroadcast: (when, act) => new Promise<Hex[]>((sprung, failed) => (trap = { when, act, sprung, failed })),
    close: () =>
      new Promise<void>((resolve) => {
        trap = undefined;
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
