/**
 * When each awaited message arrived (performance.now()), by key. A message may arrive before
 * anyone waits for it; it is kept until asked for.
 */
export class Arrivals {
  private readonly waiters = new Map<string, (at: number) => void>();
  private readonly early = new Map<string, number>();

  arrived(key: string, at = performance.now()) {
    const waiter = this.waiters.get(key);
    if (waiter) {
      this.waiters.delete(key);
      waiter(at);
    } else this.early.set(key, at);
  }

  wait(key: string, timeoutMs = 30_000): Promise<number> {
    const at = this.early.get(key);
    if (at !== undefined) {
      this.early.delete(key);
      return Promise.resolve(at);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(key);
        reject(new Error(`${key} did not arrive within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.set(key, (arrivedAt) => {
        clearTimeout(timer);
        resolve(arrivedAt);
      });
    });
  }
}
