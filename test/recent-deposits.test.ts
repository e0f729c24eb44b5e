import { describe, expect, it } from "vitest";
import { RecentDeposits } from "../src/deposits/recent.js";
import { Prisma, type Deposit } from "../src/generated/prisma/client.js";

const deposit = (id: string, status: string, clientId = "client-a"): Deposit => ({
  id,
  clientId,
  userId: "user",
  virtualAccountId: null,
  provider: "sandbox-fiat",
  eventId: `ref-${id}`,
  amount: new Prisma.Decimal("10"),
  currency: "USD",
  status,
  paymentReference: null,
  tokenAddress: null,
  transactionHash: null,
  chainId: null,
  failureReason: null,
  settleAt: null,
  createdAt: new Date(),
  updatedAt: new Date(),
});

describe("the deposits a process committed, for subscription payloads", () => {
  it("hands a row out only to its own client, and only in the status it was committed in", () => {
    const recent = new RecentDeposits();
    recent.remember(deposit("d1", "PENDING"));
    expect(recent.inStatus("client-a", "d1", "PENDING")?.status).toBe("PENDING");
    // Failed elsewhere (another instance): this row's failureReason and updatedAt are not that state's.
    expect(recent.inStatus("client-a", "d1", "FAILED")).toBeUndefined();
    expect(recent.inStatus("client-b", "d1", "PENDING")).toBeUndefined();
    recent.remember(deposit("d1", "COMPLETED"));
    expect(recent.inStatus("client-a", "d1", "COMPLETED")?.status).toBe("COMPLETED");
  });

  it("forgets the oldest beyond its capacity", () => {
    const recent = new RecentDeposits(2);
    for (const id of ["d1", "d2", "d3"]) recent.remember(deposit(id, "PENDING"));
    expect(recent.inStatus("client-a", "d1", "PENDING")).toBeUndefined();
    expect(recent.inStatus("client-a", "d3", "PENDING")).toBeDefined();
  });
});
