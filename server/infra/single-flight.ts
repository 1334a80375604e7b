/**
 * One read at a time per id and wake-up generation (`FanOut`): the subscriptions one message wakes together
 * share the promise of the read the first of them starts (its result or its error) instead of starting
 * their own, so 10,000 watchers of one account make one database read, not 10,000. The read is forgotten
 * once it settles: nothing is cached, a caller after that starts a fresh read. A wake-up for a later change
 * has a higher generation, so it never gets a read begun before that change.
 */
export class SingleFlight<T> {
  readonly #running = new Map<string, Promise<T>>();

  /** `read()`, shared while it runs with callers of the same id and generation; without a generation (a query, not a wake-up), a read of its own. */
  run(id: string, generation: number | undefined, read: () => Promise<T>): Promise<T> {
    if (generation === undefined) return read();
    const key = `${id}:${generation}`;
    let running = this.#running.get(key);
    if (!running) {
      running = read().finally(() => this.#running.delete(key));
      this.#running.set(key, running);
    }
    return running;
  }
}
