import { request } from "node:http";
import { adminSocketPath, CREATE_CLIENT_PATH, type CreatedClient } from "./protocol.js";

export class AdminRequestError extends Error {}

/** `createClientWithKey` run by the server that holds `dataDir`, through its admin socket. */
export function createClientThroughServer(dataDir: string, input: { email: string; name?: string }): Promise<CreatedClient> {
  const body = JSON.stringify(input);
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath: adminSocketPath(dataDir), method: "POST", path: CREATE_CLIENT_PATH, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          try {
            const answer = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            if (res.statusCode === 201) resolve(answer as CreatedClient);
            else reject(new AdminRequestError(`The server refused: ${answer.error ?? res.statusCode}`));
          } catch {
            reject(new AdminRequestError(`The server answered ${res.statusCode} without JSON`));
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
