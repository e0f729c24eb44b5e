import type { Context } from "../graphql/context.js";
import type { CardTransactionService } from "./transactions.js";

type Page = Awaited<ReturnType<CardTransactionService["page"]>>;
type Batch = { cardIds: string[]; result: Promise<Map<string, Page>> };

/** The batch collecting in the current tick, per request and page number. */
const pending = new WeakMap<Context, Map<number, Batch>>();

/**
 * One card's page, loaded together with every other card's same page requested in the same tick of
 * the same request: User.cardTransactions over a list of users costs a constant number of queries.
 */
export function loadCardTransactionPage(ctx: Context, cardId: string, page: number): Promise<Page> {
  let batches = pending.get(ctx);
  if (!batches) pending.set(ctx, (batches = new Map()));
  let batch = batches.get(page);
  if (!batch) {
    const cardIds: string[] = [];
    const result = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      batches.delete(page);
      return ctx.services.cardTransactions.pagesOfCards(cardIds, page);
    });
    batch = { cardIds, result };
    batches.set(page, batch);
  }
  batch.cardIds.push(cardId);
  return batch.result.then((pages) => pages.get(cardId)!);
}
