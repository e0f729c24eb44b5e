/**
 * Ledger account ids by their natural key, remembered in this process: an account's id never
 * changes and accounts are never deleted, so a journal of known accounts locks them by id in its
 * first statement. Only committed accounts are remembered: one created by a transaction still
 * running may yet roll back. (Should a remembered row be missing all the same, the lock finds
 * fewer rows and the id is forgotten.)
 */
export class AccountIds {
  private readonly ids = new Map<string, string>();
  private readonly createdIn = new WeakMap<object, Set<string>>();

  constructor(private readonly capacity = 100_000) {}

  get(clientId: string, key: string): string | undefined {
    return this.ids.get(`${clientId}/${key}`);
  }

  /** The transaction `tx` created this account: it is not remembered from that transaction. */
  created(tx: object, clientId: string, key: string) {
    const created = this.createdIn.get(tx) ?? new Set<string>();
    created.add(`${clientId}/${key}`);
    this.createdIn.set(tx, created);
  }

  /** An id read in `tx`: committed unless `tx` created it itself. */
  found(tx: object, clientId: string, key: string, id: string) {
    const name = `${clientId}/${key}`;
    if (this.createdIn.get(tx)?.has(name)) return;
    if (this.ids.size >= this.capacity) this.ids.clear();
    this.ids.set(name, id);
  }

  forget(clientId: string, key: string) {
    this.ids.delete(`${clientId}/${key}`);
  }
}
