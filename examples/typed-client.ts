// The REST API with compile-time types: openapi-fetch over the types openapi-typescript generated
// from the server's OpenAPI document (examples/generated/api.d.ts; `npm run client:types` rewrites
// it). Paths, bodies, answers and errors are all typed:
//
//   API_KEY=fpk_… npm run example:typed        (BASE_URL defaults to http://localhost:4000)
//
// It creates a user, opens an NGN virtual account, has the sandbox send money to it and settle the
// deposit, reads the balances, and shows a typed error (`error.code`) on a user that does not exist.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api.js";

const BASE_URL = (process.env.BASE_URL ?? "http://localhost:4000").replace(/\/$/, "");
const API_KEY = process.env.API_KEY ?? "";

type ApiError = components["schemas"]["Error"];

const api = createClient<paths>({ baseUrl: BASE_URL, headers: { "x-api-key": API_KEY } });

/** The data of a call that must succeed; otherwise stops with the server's typed error. */
function ok<T>(what: string, result: { data?: T; error?: ApiError | components["schemas"]["ConflictError"]; response: Response }): T {
  if (result.error || result.data === undefined) {
    throw new Error(`${what} answered ${result.response.status} ${result.error?.code}: ${result.error?.error}`);
  }
  return result.data;
}

async function main() {
  if (!API_KEY) {
    console.error("Set API_KEY: the key `npm start` printed on its first run, or one from `npm run client:create`.");
    process.exit(2);
  }

  const user = ok("POST /v1/user", await api.POST("/v1/user", {
    body: { email: `grace-${Date.now()}@example.com`, firstName: "Grace", lastName: "Hopper", phoneNumber: "+2348031234567", dob: "1990-12-09" },
  }));
  console.log(`user         ${user.id} <${user.email}>`);

  const account = ok("POST /v1/virtual-account/ngn", await api.POST("/v1/virtual-account/{currency}", {
    params: { path: { currency: "NGN" } },
    body: { userId: user.id },
  }));
  console.log(`NGN account  ${account.accountNumber} at ${account.bankName}`);

  const deposit = ok("POST /v1/sandbox/deposits", await api.POST("/v1/sandbox/deposits", { body: { userId: user.id, currency: "NGN", amount: 25000 } }));
  const settled = ok("complete", await api.POST("/v1/sandbox/deposits/{id}/complete", { params: { path: { id: deposit.id } } }));
  console.log(`deposit      ${settled.id} ${settled.amount} ${settled.currency} ${settled.status}`);

  const { balances } = ok("GET /v1/balances", await api.GET("/v1/balances/{userId}", { params: { path: { userId: user.id } } }));
  for (const row of balances) console.log(`balance      ${row.currency} posted ${row.posted}, pending ${row.pending}, available ${row.available}`);

  // A typed error: `error.code` is one of the codes the OpenAPI lists, so a switch on it is checked.
  const missing = await api.GET("/v1/balances/{userId}", { params: { path: { userId: "00000000-0000-4000-8000-000000000000" } } });
  if (!missing.error) throw new Error("a user that does not exist has balances");
  switch (missing.error.code) {
    case "NOT_FOUND":
      console.log(`typed error  ${missing.response.status} ${missing.error.code} (request ${missing.error.requestId})`);
      break;
    default:
      throw new Error(`expected NOT_FOUND, got ${missing.error.code}: ${missing.error.error}`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`typed client failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
