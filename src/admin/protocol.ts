import { join } from "node:path";

/**
 * The local admin endpoint of a server on the embedded database: HTTP over a Unix domain socket in
 * DATA_DIR (never TCP). The socket is 0600 in a 0700 directory, so only the OS user that runs the
 * server can connect; that is its authentication. One operation:
 *   POST /clients {"email", "name"?} → 201 {"client": {id, email, name}, "apiKey": {id, prefix, key}}
 *   errors → {status 4xx/5xx, {"error": message}}
 */
export const adminSocketPath = (dataDir: string) => join(dataDir, "admin.sock");

export const CREATE_CLIENT_PATH = "/clients";

export type CreatedClient = {
  client: { id: string; email: string; name: string | null };
  apiKey: { id: string; prefix: string; key: string };
};
