import type { JournalInput } from "./types.js";

/**
 * Each system (house) account of a client is split into this many shards per (code, currency),
 * each an account with its own chain; the house balance is their sum. Lowering it later is safe:
 * shards above it keep their entries and still count in the sums.
 */
export const HOUSE_SHARDS = 32;

/**
 * The shard a journal's house postings go to: fixed per user, so that different users of a client
 * rarely share a lock, and the journals of one busy user (which queue on that user's own balance
 * anyway) wait on one shard only instead of holding many while they wait.
 */
export function houseShardOf(journal: JournalInput, shards = HOUSE_SHARDS): number {
  const user = journal.postings.find((posting) => "userId" in posting.account)?.account;
  if (!user || !("userId" in user)) return 0;
  // The last 8 hex digits of a UUID are random in every version in use (v4, v7).
  return Number.parseInt(user.userId.replaceAll("-", "").slice(-8), 16) % shards;
}
