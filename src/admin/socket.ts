import { chmodSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createClientWithKey } from "../keys/first-key.js";
import { AppError } from "../errors.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import type { ApiKeyService } from "../keys/service.js";
import type { Logger } from "../logger.js";
import { adminSocketPath, CREATE_CLIENT_PATH, type CreatedClient } from "./protocol.js";

const MAX_BODY_BYTES = 10_000;
/** What a Unix socket path may hold on Linux (108) and macOS (104), less the terminating byte. */
const MAX_SOCKET_PATH_BYTES = 103;

export type AdminSocket = { close(): Promise<void> };

type Deps = { dataDir: string; prisma: PrismaClient; keys: ApiKeyService; logger: Logger };

/**
 * Serves the admin protocol (./protocol.ts) for tools such as `npm run client:create`, which cannot
 * open the embedded database while this process holds it. Called only by the holder of the data
 * directory, so a socket file left by a killed server can be replaced safely.
 */
export async function serveAdminSocket(deps: Deps): Promise<AdminSocket> {
  const path = adminSocketPath(deps.dataDir);
  const unavailable = (reason: string) => {
    deps.logger.warn({ path, reason }, "admin socket unavailable: client:create cannot reach this server while it runs");
    return { close: async () => undefined };
  };
  // Node cuts a longer socket path short instead of failing; the server still serves its API without it.
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) return unavailable(`the path is longer than ${MAX_SOCKET_PATH_BYTES} bytes`);
  const server = createServer((req, res) => void handle(deps, req, res));
  rmSync(path, { force: true });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
  } catch (err) {
    return unavailable(String(err));
  }
  chmodSync(path, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(deps: Deps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const reply = (status: number, body: object) => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  try {
    if (req.method !== "POST" || req.url !== CREATE_CLIENT_PATH) return reply(404, { error: `No admin operation ${req.method} ${req.url}` });
    const input = await readJson(req);
    const { client, apiKey } = await createClientWithKey(deps.prisma, deps.keys, input);
    const created: CreatedClient = {
      client: { id: client.id, email: client.email, name: client.name },
      apiKey: { id: apiKey.id, prefix: apiKey.prefix, key: apiKey.key },
    };
    deps.logger.info({ clientId: client.id, apiKeyPrefix: apiKey.prefix }, "admin socket: API key created");
    reply(201, created);
  } catch (err) {
    if (err instanceof AppError) return reply(err.status, { error: err.message });
    deps.logger.error({ err }, "admin socket request failed");
    reply(500, { error: "Internal error (see the server log)" });
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new AppError("PAYLOAD_TOO_LARGE", "Request body too large");
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new AppError("BAD_USER_INPUT", "Malformed JSON body");
  }
}
