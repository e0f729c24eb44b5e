-- The on-chain rail (SPEC §14): each live chain's watcher cursor, its recent canonical blocks (reorg detection),
-- its lease (one watcher per chain across instances), and where each chain deposit's transfer is.
-- A transfer is a deposit once: unique (chainId, transactionHash, logIndex).
-- CreateTable
CREATE TABLE "chain_cursors" (
    "chainId" INTEGER NOT NULL,
    "network" TEXT NOT NULL,
    "blockNumber" BIGINT NOT NULL,
    "blockHash" TEXT NOT NULL,
    "headBlock" BIGINT NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "chain_cursors_pkey" PRIMARY KEY ("chainId")
);

-- CreateTable
CREATE TABLE "chain_blocks" (
    "chainId" INTEGER NOT NULL,
    "number" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,
    "parentHash" TEXT NOT NULL,

    CONSTRAINT "chain_blocks_pkey" PRIMARY KEY ("chainId","number")
);

-- CreateTable
CREATE TABLE "chain_leases" (
    "chainId" INTEGER NOT NULL,
    "holder" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "chain_leases_pkey" PRIMARY KEY ("chainId")
);

-- CreateTable
CREATE TABLE "chain_deposits" (
    "depositId" UUID NOT NULL,
    "chainId" INTEGER NOT NULL,
    "transactionHash" TEXT NOT NULL,
    "logIndex" INTEGER NOT NULL,
    "blockNumber" BIGINT NOT NULL,
    "blockHash" TEXT,
    "settledAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chain_deposits_pkey" PRIMARY KEY ("depositId")
);

-- CreateIndex
CREATE INDEX "chain_deposits_chainId_settledAt_blockNumber_idx" ON "chain_deposits"("chainId", "settledAt", "blockNumber");

-- CreateIndex
CREATE UNIQUE INDEX "chain_deposits_chainId_transactionHash_logIndex_key" ON "chain_deposits"("chainId", "transactionHash", "logIndex");

-- AddForeignKey
ALTER TABLE "chain_deposits" ADD CONSTRAINT "chain_deposits_depositId_fkey" FOREIGN KEY ("depositId") REFERENCES "deposits"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

