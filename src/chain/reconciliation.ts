import { erc20Abi, formatUnits, getAddress, type Address, type PublicClient } from "viem";
import type { Decimal } from "decimal.js";
import type { Mode } from "../modes.js";
import type { Sql } from "../db/sql.js";
import { Exact } from "../money/amount.js";
import type { TokenSymbol } from "../providers/chains.js";
import type { NetworkSettings } from "./networks.js";

/** One on-chain network of a mode, as reconciliation reads it: its client, its treasury, its tokens' decimals. */
export type ReconciledNetwork = {
  settings: NetworkSettings;
  client: PublicClient;
  treasury: Address;
  decimalsOf(token: Address): Promise<number>;
};

/** What one network holds of a token at the block its watcher finished (whole tokens, exact). */
export type NetworkHolding = { network: string; chainId: number; block: string; treasury: string; depositAddresses: string; addressesRead: number };

/**
 * The books of one token in one mode: what the chains hold against what the platform owes, in whole
 * tokens as exact decimal text. `difference` is onChain − liabilities: negative is a shortfall.
 */
export type TokenReconciliation = {
  mode: Mode;
  token: TokenSymbol;
  onChain: string;
  liabilities: string;
  difference: string;
  /** The liabilities: the mode's users' balances, its clients' revenue, and withdrawals and forwards debited but not yet on the chain. */
  userBalances: string;
  clientRevenue: string;
  sendsNotOnChain: string;
  networks: NetworkHolding[];
};

/** The books cannot be read consistently now (a network's watcher has not started, or has not caught up with a reorg). */
export class NotReconciled extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "NotReconciled";
  }
}

/** Confirmed sends this many blocks below the synced block are still checked against the chain (a deep reorg may drop them): the sender's window. */
const recheckBlocks = (confirmations: number) => confirmations + Math.max(64, confirmations);

// One statement, so one snapshot: the cursors, the ledger's sums, the outgoing sends and the addresses to read
// are seen as of one moment (a deposit credited after the cursor was read cannot be counted without its block).
const SNAPSHOT = `
  WITH n AS (SELECT * FROM unnest($1::int[], $2::bigint[]) AS n("chainId", "window"))
  SELECT
    (SELECT coalesce(json_agg(json_build_object('chainId', c."chainId", 'block', c."blockNumber"::text, 'hash', c."blockHash")), '[]')
       FROM "chain_cursors" c JOIN n ON n."chainId" = c."chainId") AS "cursors",
    (SELECT coalesce(json_agg(json_build_object('code', a."code", 'currency', a."currency", 'balance', a."balance"::text)), '[]')
       FROM (SELECT la."code", la."currency", sum(la."balance") AS "balance"
             FROM "ledger_accounts" la JOIN "clients" cl ON cl."id" = la."clientId"
             WHERE cl."mode" = $3 AND la."code" IN ('USER', 'CLIENT_REVENUE') AND la."currency" = ANY($4::text[])
             GROUP BY la."code", la."currency") a) AS "ledger",
    (SELECT coalesce(json_agg(json_build_object('chainId', s."chainId", 'token', s."tokenAddress", 'from', s."fromAddress", 'amount', s."amount"::text,
                                                'status', s."status", 'nonce', s."nonce"::text)), '[]')
       FROM "chain_sends" s JOIN n ON n."chainId" = s."chainId" LEFT JOIN "chain_cursors" c ON c."chainId" = s."chainId"
       WHERE s."purpose" IN ('WITHDRAWAL', 'FORWARD') AND s."tokenAddress" IS NOT NULL AND s."status" <> 'FAILED'
         AND (s."status" <> 'CONFIRMED' OR s."reorgedAt" IS NOT NULL OR s."blockNumber" >= c."blockNumber" - n."window")) AS "sends",
    (SELECT coalesce(json_agg(json_build_object('chainId', x."chainId", 'address', x."address", 'token', x."tokenAddress")), '[]')
       FROM (SELECT DISTINCT cd."chainId", w."address", d."tokenAddress"
             FROM "chain_deposits" cd JOIN n ON n."chainId" = cd."chainId"
             JOIN "deposits" d ON d."id" = cd."depositId"
             JOIN "wallets" w ON w."userId" = d."userId" AND w."clientId" = d."clientId"
             LEFT JOIN "chain_sends" sw ON sw."id" = cd."sweepId"
             LEFT JOIN "chain_cursors" c ON c."chainId" = cd."chainId"
             WHERE d."tokenAddress" IS NOT NULL AND (d."status" <> 'FAILED' OR cd."flag" IS NOT NULL)
               AND (sw."id" IS NULL OR sw."status" <> 'CONFIRMED' OR sw."reorgedAt" IS NOT NULL OR sw."blockNumber" >= c."blockNumber" - n."window")) x) AS "addresses"`;

type Snapshot = {
  cursors: { chainId: number; block: string; hash: string }[];
  ledger: { code: "USER" | "CLIENT_REVENUE"; currency: string; balance: string }[];
  sends: { chainId: number; token: string; from: string; amount: string; status: string; nonce: string | null }[];
  addresses: { chainId: number; address: string; token: string }[];
};

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const zero = () => new Exact(0);

/**
 * Reconciles one mode's books, per token, over the mode's networks on a chain (a simulated network holds
 * nothing). On each network, at the block its watcher finished: the treasury's balance and every deposit
 * address that holds or should hold tokens (one with a deposit not yet swept, or swept within the recheck
 * window). Against the mode's liabilities: its users' balances and its clients' revenue of the token (the
 * ledger does not say on which network a balance is, so the comparison is per mode and token, summing the
 * networks), plus the withdrawals and forwards debited whose transfer is not on the chain at that block.
 */
export async function reconcile(sql: Sql, mode: Mode, networks: ReconciledNetwork[]): Promise<TokenReconciliation[]> {
  if (networks.length === 0) return [];
  const chainIds = await Promise.all(networks.map((network) => network.client.getChainId()));
  const symbols = [...new Set(networks.flatMap((network) => Object.keys(network.settings.tokens) as TokenSymbol[]))].sort();
  const windows = networks.map((network) => recheckBlocks(network.settings.confirmations));
  const [snapshot] = await sql.query<Snapshot>("chain_reconciliation_snapshot", SNAPSHOT, [chainIds, windows, mode, symbols]);

  const onChain = new Map<TokenSymbol, Decimal>(symbols.map((symbol) => [symbol, zero()]));
  const notOnChain = new Map<TokenSymbol, Decimal>(symbols.map((symbol) => [symbol, zero()]));
  const holdings = new Map<TokenSymbol, NetworkHolding[]>(symbols.map((symbol) => [symbol, []]));
  await Promise.all(
    networks.map(async (network, i) => {
      const chainId = chainIds[i];
      const name = network.settings.name;
      const cursor = snapshot.cursors.find((row) => row.chainId === chainId);
      if (!cursor) throw new NotReconciled(`${name}: the watcher has not started`);
      const blockNumber = BigInt(cursor.block);
      // The state is read at the block the database agrees with; a block replaced since (a reorg the watcher has not yet seen) waits for it.
      const block = await network.client.getBlock({ blockNumber }).catch(() => undefined);
      if (!block || block.hash !== cursor.hash) throw new NotReconciled(`${name}: block ${cursor.block} left the chain; the watcher has not caught up yet`);
      const { client, treasury } = network;
      const sends = snapshot.sends.filter((send) => send.chainId === chainId);
      const senders = [...new Set(sends.map((send) => getAddress(send.from)))];
      const counts = new Map(await Promise.all(senders.map(async (from) => [from.toLowerCase(), BigInt(await client.getTransactionCount({ address: from, blockNumber }))] as const)));
      for (const [symbol, token] of Object.entries(network.settings.tokens) as [TokenSymbol, Address][]) {
        const decimals = await network.decimalsOf(token);
        const balanceOf = (address: Address) => client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [address], blockNumber });
        const addresses = snapshot.addresses.filter((row) => row.chainId === chainId && same(row.token, token)).map((row) => getAddress(row.address));
        const [inTreasury, ...atAddresses] = await Promise.all([balanceOf(treasury), ...addresses.map(balanceOf)]);
        const atDeposits = atAddresses.reduce((sum, units) => sum + units, 0n);
        const treasuryAmount = new Exact(formatUnits(inTreasury, decimals));
        const depositAmount = new Exact(formatUnits(atDeposits, decimals));
        onChain.set(symbol, onChain.get(symbol)!.plus(treasuryAmount).plus(depositAmount));
        holdings.get(symbol)!.push({ network: name, chainId, block: cursor.block, treasury: treasuryAmount.toFixed(), depositAddresses: depositAmount.toFixed(), addressesRead: addresses.length });
        // A transfer out is on the chain at that block exactly when its sender's count of mined transactions has passed its nonce;
        // an ORPHANED one never will be (another transaction took its nonce): its tokens are still there, and still owed.
        for (const send of sends.filter((row) => same(row.token, token))) {
          const mined = send.status !== "ORPHANED" && send.nonce !== null && BigInt(send.nonce) < counts.get(send.from.toLowerCase())!;
          if (!mined) notOnChain.set(symbol, notOnChain.get(symbol)!.plus(send.amount));
        }
      }
    }),
  );

  const ledger = (code: "USER" | "CLIENT_REVENUE", symbol: string) => new Exact(snapshot.ledger.find((row) => row.code === code && row.currency === symbol)?.balance ?? 0);
  return symbols.map((token) => {
    const [userBalances, clientRevenue, sendsNotOnChain] = [ledger("USER", token), ledger("CLIENT_REVENUE", token), notOnChain.get(token)!];
    const liabilities = userBalances.plus(clientRevenue).plus(sendsNotOnChain);
    const held = onChain.get(token)!;
    return {
      mode,
      token,
      onChain: held.toFixed(),
      liabilities: liabilities.toFixed(),
      difference: held.minus(liabilities).toFixed(),
      userBalances: userBalances.toFixed(),
      clientRevenue: clientRevenue.toFixed(),
      sendsNotOnChain: sendsNotOnChain.toFixed(),
      networks: holdings.get(token)!.sort((a, b) => (a.network < b.network ? -1 : 1)),
    };
  });
}
