/**
 * Crash checkpoints for long turns (streams): what each running stream on this instance has delivered so far
 * is written next to its reservation (`PoolStore.checkpoint`), as the ledger row the sweeper writes if the
 * instance dies — so a crash bills what was delivered (less at most one interval), not nothing and not the
 * ceiling (SECURITY "Quota and ledger").
 *
 * A stream is checkpointed at its first token (within `FIRST_TOKEN_MS`, batched with every other stream
 * that started meanwhile) and then every interval (one second by default) while it produces. One timer per
 * instance, one Redis call per round covering every open stream whose count moved (`RedisPoolStore.checkpoint`);
 * per chunk the executor only counts (`Executor.progress` reads that count when a round asks).
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { LedgerEntry } from './ledger.ts';
import type { CreditPayment } from './credit-payment.ts';
import type { PoolStore, ReservationRef } from './pool.store.ts';
import type { Metered, Turn } from './turn.ts';

/** What a stream has delivered so far: cheap (a counter read), asked once per round. */
type Progress = () => Metered;

/** How long a first token waits for company before its checkpoint is written. */
const FIRST_TOKEN_MS = 25;

interface OpenStream {
  progress: Progress;
  /** Output tokens of the last checkpoint written; -1 before the first. */
  written: number;
}

export class Checkpointer {
  readonly #store: PoolStore;
  readonly #intervalMs: number;
  readonly #entry: (turn: Turn, metered: Metered) => LedgerEntry;
  readonly #log: Logger;
  /** Where credit-paid streams (no pool reservation) keep their checkpoints: next to their credit hold. */
  readonly #credit: Pick<CreditPayment, 'checkpoint'> | undefined;
  readonly #live = new Map<Turn, OpenStream>();
  #timer: NodeJS.Timeout | null = null;
  #soon: NodeJS.Timeout | null = null;
  #running = false;
  /** Asked for while a round was writing: another follows it (`first`: only streams never written yet). */
  #again: 'first' | 'all' | null = null;

  constructor(store: PoolStore, intervalMs: number, entry: (turn: Turn, metered: Metered) => LedgerEntry, log: Logger, credit?: Pick<CreditPayment, 'checkpoint'>) {
    this.#store = store;
    this.#credit = credit;
    this.#intervalMs = intervalMs;
    this.#entry = entry;
    this.#log = log;
  }

  start(): void {
    this.#timer = setInterval(() => void this.checkpoint(), this.#intervalMs).unref();
  }

  track(turn: Turn, progress: Progress): void {
    this.#live.set(turn, { progress, written: -1 });
  }

  untrack(turn: Turn): void {
    this.#live.delete(turn);
  }

  /**
   * A tracked stream's first token went out: within `FIRST_TOKEN_MS` a round writes every stream not yet
   * checkpointed (only those: the others keep the interval's pace however many streams start).
   */
  firstToken(): void {
    if (this.#soon || !this.#timer) return;
    this.#soon = setTimeout(() => {
      this.#soon = null;
      void this.checkpoint('first');
    }, FIRST_TOKEN_MS).unref();
  }

  /**
   * Writes a checkpoint for every tracked stream that has delivered something new since its last one
   * (`first`: for those never checkpointed yet). Returns how many it wrote.
   */
  async checkpoint(which: 'first' | 'all' = 'all'): Promise<number> {
    if (this.#running) {
      this.#again = which === 'all' || this.#again === 'all' ? 'all' : 'first';
      return 0;
    }
    this.#running = true;
    let written = 0;
    try {
      for (let round: 'first' | 'all' | null = which; round; round = this.#again) {
        this.#again = null;
        written += await this.#round(round === 'first');
      }
      return written;
    } finally {
      this.#running = false;
    }
  }

  async #round(firstOnly: boolean): Promise<number> {
    const items: { ref: ReservationRef; entry: LedgerEntry }[] = [];
    const credited: { requestId: string; entry: LedgerEntry }[] = [];
    const opens: OpenStream[] = [];
    const written: number[] = [];
    for (const [turn, open] of this.#live) {
      // Before its first output a stream has delivered nothing: a crash then costs nothing.
      if (!turn.output || turn.settled || (firstOnly && open.written !== -1)) continue;
      if (turn.ref === null && !(turn.paidFromCredit && this.#credit)) continue;
      const metered = open.progress();
      if (metered.outputTokens === open.written) continue;
      const entry = this.#entry(turn, metered);
      if (turn.ref) items.push({ ref: turn.ref, entry });
      else credited.push({ requestId: turn.id, entry: { ...entry, paidFromCredit: true } });
      opens.push(open);
      written.push(metered.outputTokens);
    }
    if (opens.length === 0) return 0;
    try {
      await Promise.all([items.length > 0 ? this.#store.checkpoint(items) : undefined, credited.length > 0 ? this.#credit!.checkpoint(credited) : undefined]);
    } catch (error) {
      this.#log.warn({ err: error, streams: opens.length }, 'stream checkpoint failed');
      return 0;
    }
    // Only once written: a round that failed is retried by the next.
    opens.forEach((open, i) => (open.written = written[i]!));
    return opens.length;
  }

  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    if (this.#soon) clearTimeout(this.#soon);
    this.#timer = this.#soon = null;
  }
}
