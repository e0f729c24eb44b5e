import type { DepositService } from "../deposits/service.js";
import type { Logger } from "../logger.js";
import type { SandboxDeposits } from "./deposits.js";

const POLL_MS = 250;
const BATCH = 50;
/** A deposit whose settlement failed (say the FX source was down) is tried again this much later. */
const RETRY_MS = 5_000;

export type DepositSettler = { stop(): Promise<void> };

/**
 * Sandbox deposits settle by themselves at their `settleAt`. The time is kept in the database, so a
 * restarted process resumes whatever was pending; every instance polls, and the settle event's fixed
 * id (plus the conditional status update) lets only one of them complete a deposit.
 */
export function startDepositSettler(deps: { deposits: DepositService; sandbox: SandboxDeposits; logger: Logger }): DepositSettler {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pass: Promise<void> = Promise.resolve();

  async function settleDue() {
    const due = await deps.deposits.dueForSettlement(new Date(), BATCH);
    for (const deposit of due) {
      if (stopped) return;
      try {
        await deps.sandbox.settle(deposit);
      } catch (err) {
        deps.logger.error({ err, depositId: deposit.id }, "sandbox deposit settlement failed; retrying later");
        await deps.deposits.postponeSettlement(deposit.id, RETRY_MS);
      }
    }
  }

  function schedule() {
    timer = setTimeout(() => {
      pass = settleDue()
        .catch((err) => deps.logger.error({ err }, "sandbox deposit settler pass failed"))
        .finally(() => {
          if (!stopped) schedule();
        });
    }, POLL_MS);
  }

  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await pass;
    },
  };
}
