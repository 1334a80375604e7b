/**
 * Crash checkpoints for long turns (streams): every few seconds, what each running stream on this instance
 * has produced so far is written next to its reservation (`PoolStore.checkpoint`), as the ledger row the
 * sweeper writes if the instance dies — so a crash bills what was produced (± one interval), not nothing
 * and not the ceiling. One timer per instance, one batched write per round.
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { LedgerEntry } from './ledger.ts';
import type { PoolStore } from './pool.store.ts';
import type { Metered, Turn } from './turn.ts';

type Progress = () => Promise<Metered>;

export class Checkpointer {
  readonly #store: PoolStore;
  readonly #intervalMs: number;
  readonly #entry: (turn: Turn, metered: Metered) => LedgerEntry;
  readonly #log: Logger;
  readonly #live = new Map<Turn, Progress>();
  #timer: NodeJS.Timeout | null = null;
  #running = false;

  constructor(store: PoolStore, intervalMs: number, entry: (turn: Turn, metered: Metered) => LedgerEntry, log: Logger) {
    this.#store = store;
    this.#intervalMs = intervalMs;
    this.#entry = entry;
    this.#log = log;
  }

  start(): void {
    this.#timer = setInterval(() => void this.checkpoint(), this.#intervalMs).unref();
  }

  track(turn: Turn, progress: Progress): void {
    this.#live.set(turn, progress);
  }

  untrack(turn: Turn): void {
    this.#live.delete(turn);
  }

  /** Writes a checkpoint for every tracked turn that has run at least one interval. */
  async checkpoint(now = performance.now()): Promise<number> {
    if (this.#running) return 0;
    this.#running = true;
    try {
      const items = [];
      for (const [turn, progress] of this.#live) {
        if (turn.settled || turn.ref === null || now - turn.upstreamFrom < this.#intervalMs) continue;
        const metered = await progress().catch(() => null);
        if (metered && !turn.settled) items.push({ ref: turn.ref, entry: this.#entry(turn, metered) });
      }
      await this.#store.checkpoint(items);
      return items.length;
    } catch (error) {
      this.#log.warn({ err: error }, 'stream checkpoint failed');
      return 0;
    } finally {
      this.#running = false;
    }
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
  }
}
