/**
 * Ledger account ids by their natural key, remembered in this process: an account's id never
 * changes and accounts are never deleted, so a journal of known accounts locks them by id in its
 * first statement. An id remembered from a transaction that later rolled back is caught by the
 * lock (the row is missing) and forgotten.
 */
export class AccountIds {
  private readonly ids = new Map<string, string>();

  constructor(private readonly capacity = 100_000) {}

  get(clientId: string, key: string): string | undefined {
    return this.ids.get(`${clientId}/${key}`);
  }

  remember(clientId: string, key: string, id: string) {
    if (this.ids.size >= this.capacity) this.ids.clear();
    this.ids.set(`${clientId}/${key}`, id);
  }

  forget(clientId: string, key: string) {
    this.ids.delete(`${clientId}/${key}`);
  }
}
