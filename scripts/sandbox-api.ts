// What `npm run listen` and `npm run trigger` share: the server and key they talk to (API_KEY and
// BASE_URL, as examples/quickstart.ts reads them) and one REST call that stops on any non-2xx.

export const BASE_URL = (process.env.BASE_URL ?? "http://localhost:4000").replace(/\/$/, "");

/** The server's answer to a call that failed: its status, and its error body's `code` and text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** API_KEY, or a clear exit (2) naming where a key comes from. */
export function apiKey(script: string): string {
  const key = process.env.API_KEY ?? "";
  if (!key) {
    process.stderr.write(`${script}: set API_KEY: the key \`npm start\` printed on its first run, or one from \`npm run client:create\`\n`);
    process.exit(2);
  }
  return key;
}

/** One REST call with the key; a non-2xx answer rejects with ApiError. `parse` reads the answer (JSON.parse unless given). */
export async function rest<T>(
  key: string,
  method: "GET" | "POST" | "PATCH",
  path: string,
  options: { body?: unknown; signal?: AbortSignal; parse?: (text: string) => unknown } = {},
): Promise<T> {
  const response = await fetch(`${BASE_URL}${path}`, {
    method,
    headers: { "x-api-key": key, ...(options.body === undefined ? {} : { "content-type": "application/json" }) },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  const text = await response.text();
  if (!response.ok) {
    let code: string | undefined;
    try {
      code = (JSON.parse(text) as { code?: string }).code;
    } catch {
      // not the server's JSON error: the text says what happened
    }
    throw new ApiError(response.status, code, `${method} ${path} answered ${response.status}: ${text}`);
  }
  return (options.parse ?? JSON.parse)(text) as T;
}
