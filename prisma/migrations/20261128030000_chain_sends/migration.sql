-- The on-chain rail's sends (SPEC §14): withdrawals, forwards, sweeps and the gas for sweeps, signed by the
-- platform. A purpose is sent once: unique (purpose, purposeId). Every signed transaction of a send (the first
-- and its replacements at the same nonce) is stored before it is broadcast. Nonces are given per sending
-- address under the sender's lease. The watcher's lease table gains a role (one watcher and one sender per chain).
-- AlterTable
ALTER TABLE "chain_leases" ADD COLUMN "role" TEXT NOT NULL DEFAULT 'watcher';
ALTER TABLE "chain_leases" DROP CONSTRAINT "chain_leases_pkey";
ALTER TABLE "chain_leases" ADD CONSTRAINT "chain_leases_pkey" PRIMARY KEY ("chainId", "role");

-- AlterTable
ALTER TABLE "withdrawals" ADD COLUMN "transactionHash" TEXT;

-- AlterTable
ALTER TABLE "chain_deposits" ADD COLUMN "sweepId" UUID;

-- CreateTable
CREATE TABLE "chain_sends" (
    "id" UUID NOT NULL,
    "chainId" INTEGER NOT NULL,
    "network" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "purposeId" TEXT NOT NULL,
    "fromAddress" TEXT NOT NULL,
    "toAddress" TEXT NOT NULL,
    "tokenAddress" TEXT,
    "amount" DECIMAL(38,18) NOT NULL,
    "status" TEXT NOT NULL,
    "waitingFor" TEXT,
    "nonce" BIGINT,
    "transactionHash" TEXT,
    "rawTransaction" TEXT,
    "maxFeePerGas" DECIMAL(78,0),
    "maxPriorityFeePerGas" DECIMAL(78,0),
    "gasLimit" DECIMAL(78,0),
    "broadcastAt" TIMESTAMPTZ(3),
    "blockNumber" BIGINT,
    "failureReason" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chain_sends_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "chain_send_attempts" (
    "transactionHash" TEXT NOT NULL,
    "sendId" UUID NOT NULL,
    "rawTransaction" TEXT NOT NULL,
    "maxFeePerGas" DECIMAL(78,0) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chain_send_attempts_pkey" PRIMARY KEY ("transactionHash")
);

-- CreateTable
CREATE TABLE "chain_nonces" (
    "chainId" INTEGER NOT NULL,
    "address" TEXT NOT NULL,
    "next" BIGINT NOT NULL,

    CONSTRAINT "chain_nonces_pkey" PRIMARY KEY ("chainId","address")
);

-- CreateIndex
CREATE UNIQUE INDEX "chain_sends_purpose_purposeId_key" ON "chain_sends"("purpose", "purposeId");

-- CreateIndex
CREATE INDEX "chain_sends_chainId_status_createdAt_idx" ON "chain_sends"("chainId", "status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "chain_sends_chainId_fromAddress_nonce_key" ON "chain_sends"("chainId", "fromAddress", "nonce");

-- CreateIndex
CREATE INDEX "chain_send_attempts_sendId_idx" ON "chain_send_attempts"("sendId");

-- CreateIndex
CREATE INDEX "chain_deposits_sweepId_idx" ON "chain_deposits"("sweepId");

-- AddForeignKey
ALTER TABLE "chain_send_attempts" ADD CONSTRAINT "chain_send_attempts_sendId_fkey" FOREIGN KEY ("sendId") REFERENCES "chain_sends"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
