/**
 * Settlement, off the critical path but durable. The pipeline hands each finished turn here once
 * (`record`); rows are written to the append-only ledger in batches (one multi-row insert, unique turn
 * id, so settling twice writes one row), and only then are the reservations moved to the actual cost — so a
 * crash in between leaves a reservation whose ledger row exists, which the sweeper (`sweeper.ts`) settles
 * to that row's cost.
 *
 * Until its row is written a finished turn lives only in this queue, so each is also written next to its
 * reservation at once as a final checkpoint (`final: true`, one Redis call per event-loop turn for every
 * turn finished in it, never awaited by the reply): if the instance dies before the round, the sweeper
 * writes that row as it is, so a turn answered 200 is still billed its exact cost.
 *
 * It also tracks database health: while ledger writes or pings fail, `databaseHealthy` is false and
 * admission fails closed.
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Config } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import type { Database } from '../db/orm.ts';
import { insertLedgerRows, type LedgerEntry } from './ledger.ts';
import type { PoolStore, ReservationRef } from './pool.store.ts';

interface Pending {
  entry: LedgerEntry;
  ref: ReservationRef | null;
  /** `commit`'s caller, told once whether the row and the pools were written (then dropped). */
  committed?: ((done: boolean) => void) | undefined;
}

interface PoolSettlement {
  ref: ReservationRef;
  costMicros: Micros;
}

const BATCH = 500;
/** Pool settlements kept for retry while Redis is away; beyond that the sweeper settles them after their TTL. */
const MAX_POOL_RETRIES = 100_000;
/**
 * Under steady traffic a round starts at most every `ROUND_MS`, and never sooner than `COALESCE_MS` after
 * the last one ended; a reservation outlives its request by about that. Each round is a PostgreSQL
 * transaction (the COPY, its rollup trigger, a WAL flush) whose cost hardly depends on its rows, and that
 * work shares the machine with the requests: at 1,000 req/s rounds every 5 ms carried ~5 turns each.
 */
const ROUND_MS = 20;
const COALESCE_MS = 5;
const IDLE_MS = 50;

export class Settlement {
  readonly #db: Database;
  readonly #store: PoolStore;
  readonly #log: Logger;
  readonly #currency: string;
  #queue: Pending[] = [];
  /** Pool settlements Redis refused: retried (settling is idempotent), so reservations and stream slots are not held until their TTL. */
  #poolRetries: PoolSettlement[] = [];
  #flushing: Promise<void> | null = null;
  /** Final checkpoints of the turns recorded in this event-loop turn, written together (`#checkpointFinal`). */
  #finals: { ref: ReservationRef; entry: LedgerEntry }[] = [];
  #scheduled = false;
  #retryTimer: NodeJS.Timeout | null = null;
  #pingTimer: NodeJS.Timeout | null = null;
  #closed = false;
  #lastFlushAt = Number.NEGATIVE_INFINITY;
  databaseHealthy = true;

  constructor(config: Config, db: Database, store: PoolStore, log: Logger) {
    this.#db = db;
    this.#store = store;
    this.#log = log;
    this.#currency = config.currency;
  }

  /** Starts the database health probe. */
  start(): void {
    this.#pingTimer = setInterval(() => {
      this.#db.ping(1000).then(
        () => {
          if (!this.databaseHealthy) this.#log.info('database reachable again; admission reopened');
          this.databaseHealthy = true;
        },
        () => {
          if (this.databaseHealthy) this.#log.warn('database unreachable; chat admission fails closed');
          this.databaseHealthy = false;
        },
      );
    }, 1000);
    this.#pingTimer.unref();
  }

  /** Queues one finished request. `ref` is null when nothing was reserved. */
  record(entry: LedgerEntry, ref: ReservationRef | null): void {
    this.#queue.push({ entry, ref });
    if (ref !== null) this.#checkpointFinal(entry, ref);
    // A running round picks it up, or schedules the next one when it ends (`flush`).
    if (!this.#flushing) this.#schedule();
  }

  /**
   * Records one request and resolves once its ledger row and its pools are written: true then, false when
   * either write failed (it is retried as any other). A refund is committed this way before the reply says
   * `quotaRefunded: true`, so the next request, on any instance, sees it. It rides the next round, not a
   * coalesced one.
   */
  commit(entry: LedgerEntry, ref: ReservationRef): Promise<boolean> {
    return new Promise((committed) => {
      this.#queue.push({ entry, ref, committed });
      this.#checkpointFinal(entry, ref);
      if (!this.#flushing) this.#schedule(true);
    });
  }

  /**
   * Queues the turn's final checkpoint; the first of an event-loop turn schedules the write. Scheduled
   * before the round (`#schedule`), and the round writes the ledger before it settles, so the checkpoint
   * reaches Redis ahead of the settlement that deletes it. Should it land after (a script reloaded after a
   * Redis restart), it is never read: the sweeper reads checkpoints only through a live reservation or a
   * live lease, and the turn's ledger row, written before any settlement, keeps a lease's copy out.
   */
  #checkpointFinal(entry: LedgerEntry, ref: ReservationRef): void {
    if (this.#finals.push({ ref, entry: { ...entry, final: true } }) > 1) return;
    setImmediate(() => {
      const finals = this.#finals;
      this.#finals = [];
      // A failed write only loses the crash backstop: the round settles these turns as usual.
      this.#store.checkpoint(finals).catch((error: unknown) => this.#log.warn({ err: error, turns: finals.length }, 'final checkpoint failed'));
    });
  }

  /** `now`: run the round in this turn of the event loop's check phase, even under steady traffic. */
  #schedule(now = false): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    const run = () => {
      this.#scheduled = false;
      void this.#round(false);
    };
    // After a quiet spell settle at once; under steady traffic gather the requests of a round's interval into
    // one round (one COPY, one Redis call) so settlement does not compete with every next request.
    const since = performance.now() - this.#lastFlushAt;
    if (now || since > IDLE_MS) setImmediate(run);
    else setTimeout(run, Math.max(COALESCE_MS, ROUND_MS - since));
  }

  /** Writes everything queued so far (ledger, then Redis). Resolves when the queue is empty or the DB fails. */
  flush(): Promise<void> {
    return this.#round(true);
  }

  /**
   * One settlement round: everything queued (`all`, for `flush`), or one batch (a scheduled round). Requests
   * recorded while a scheduled round writes wait for the next one, `COALESCE_MS` or more later — without that, one
   * sequential client got an insert and a Redis call of its own per request, whose work (and PostgreSQL's)
   * competed with its next request.
   */
  #round(all: boolean): Promise<void> {
    if (this.#flushing) return this.#flushing.then(() => (all && (this.#queue.length > 0 || this.#poolRetries.length > 0) ? this.flush() : undefined));
    this.#flushing = this.#drain(all).finally(() => {
      this.#flushing = null;
      // Recorded after the round's last look at the queue (its final await, or the moment between the round
      // ending and this callback): the next round, unless a retry after a failed write is already due.
      if (this.#queue.length > 0 && !this.#retryTimer && !this.#closed) this.#schedule();
    });
    return this.#flushing;
  }

  async #drain(all: boolean): Promise<void> {
    this.#lastFlushAt = performance.now();
    let batches = all ? Infinity : 1;
    while (this.#queue.length > 0 && batches-- > 0) {
      const batch = this.#queue.splice(0, BATCH);
      // A turn admitted under a lease says so on its row: if the instance dies, the sweeper returns the
      // lease minus what the ledger billed under it.
      const leaseOf = this.#store.leaseOf?.bind(this.#store);
      if (leaseOf) {
        for (const item of batch) {
          const leaseId = item.ref ? leaseOf(item.ref.requestId) : undefined;
          if (leaseId) item.entry.leaseId = leaseId;
        }
      }
      try {
        await this.#insert(batch.map((item) => item.entry));
        this.databaseHealthy = true;
      } catch (error) {
        this.databaseHealthy = false;
        tell(batch, false);
        this.#queue.unshift(...batch);
        this.#log.error({ err: error, pending: this.#queue.length }, 'ledger write failed; will retry');
        this.#retrySoon();
        return;
      }
      const pools: PoolSettlement[] = [];
      for (const item of batch) if (item.ref !== null) pools.push({ ref: item.ref, costMicros: item.entry.costMicros });
      tell(batch, await this.#settlePools(pools));
    }
    if (this.#poolRetries.length > 0) await this.#settlePools([]);
  }

  /** Moves the pools (after the ledger rows exist), with earlier settlements Redis refused; false when Redis refused these. */
  async #settlePools(items: PoolSettlement[]): Promise<boolean> {
    const retries = this.#poolRetries.splice(0, BATCH);
    const all = retries.length > 0 ? retries.concat(items) : items;
    if (all.length === 0) return true;
    try {
      await this.#store.settle(all);
      return true;
    } catch (error) {
      // The ledger rows exist and settling is idempotent: retry shortly; the sweeper is the backstop.
      this.#poolRetries.unshift(...all);
      this.#poolRetries.splice(MAX_POOL_RETRIES);
      this.#log.warn({ err: error, pending: this.#poolRetries.length }, 'pool settlement failed; will retry');
      this.#retrySoon();
      return false;
    }
  }

  #retrySoon(): void {
    if (this.#retryTimer || this.#closed) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      void this.flush();
    }, 500);
  }

  #insert(entries: LedgerEntry[]): Promise<void> {
    return insertLedgerRows(this.#db, this.#currency, entries);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of [this.#pingTimer, this.#retryTimer]) if (timer) clearInterval(timer);
    await this.flush().catch(() => undefined);
  }
}

/** Tells the batch's `commit` callers how their writes went, once. */
function tell(batch: readonly Pending[], done: boolean): void {
  for (const item of batch) {
    if (!item.committed) continue;
    item.committed(done);
    item.committed = undefined;
  }
}
