import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, newTenant, type TestServer } from "./support/server.js";
import { rest, userInput } from "./support/http.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.stop());

describe("POST /v1/user", () => {
  it("creates a user and answers 201 with the contract's fields", async () => {
    const tenant = await newTenant(server);
    const input = userInput({ email: "Grace@Example.COM" });
    const res = await rest(server, "POST", "/v1/user", { headers: tenant.headers, body: input });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(["id", "createdAt", "updatedAt", "firstName", "lastName", "phoneNumber", "email", "clientId"]);
    expect(res.body.email).toBe("grace@example.com");
    expect(res.body.clientId).toBe(tenant.clientId);
    expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});
