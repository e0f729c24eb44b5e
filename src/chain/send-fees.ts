import type { SendPurpose } from "./send-records.js";
import { withMargin } from "./transactions.js";

/**
 * Sweeps never cost more than they move: they are the platform's own business and never urgent, so a sweep and
 * its gas top-up bid at most this fraction of the network's fee ceiling (CHAIN_MAX_FEE_GWEI_<NETWORK>), and a
 * sweep waits (FEES) while the node asks more. At the default ceilings a sweep with its top-up (about 80,000 gas)
 * then costs at most 0.0016 ETH on Ethereum, cents elsewhere: less than CHAIN_SWEEP_MIN of a dollar stablecoin
 * (docs/chain.md, Sweeps).
 */
const SWEEP_FEE_SHARE = 10n;

/** The most a send of this purpose bids per gas. */
export function feeCeilingOf(purpose: SendPurpose, networkCeiling: bigint): bigint {
  return purpose === "SWEEP" || purpose === "GAS" ? networkCeiling / SWEEP_FEE_SHARE : networkCeiling;
}

/**
 * A sweep's gas limit is the node's estimate itself: it moves the address's own tokens, which only incoming
 * transfers change, so the estimate holds; a margin would be gas money left on the address after every sweep
 * (its top-up pays gasLimit × maxFeePerGas). Other sends keep a fifth more (the treasury's state moves).
 */
export function gasLimitFor(purpose: SendPurpose, estimate: bigint): bigint {
  return purpose === "SWEEP" ? estimate : withMargin(estimate);
}
