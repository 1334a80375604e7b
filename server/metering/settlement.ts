/**
 * Settlement, off the critical path but durable. The pipeline hands each finished turn here once
 * (`record`); rows are written to the append-only ledger in batches (one multi-row insert, unique turn
 * id, so settling twice writes one row), and only then are the reservations moved to the actual cost — so a
 * crash in between leaves a reservation whose ledger row exists, which the sweeper (`sweeper.ts`) settles
 * to that row's cost.
 *
 * Until its row is written a finished turn lives only in this queue, so each is also written next to its
 * reservation (a credit-paid turn: under its own id) as a final checkpoint (`final: true`). The pipeline
 * records a turn right before its reply's last bytes are written (`Exchange.finishing`), and the reply waits
 * for what `record` returns: the final checkpoints of one turn of the event loop are written to the Redis
 * socket together in its check phase, one command, never awaited, and only then do their replies end. So a
 * client that has its whole reply had it after Redis had the row: if the instance dies before the round,
 * the sweeper writes that row as it is, and a turn answered 200 is billed its exact cost. (One command a
 * turn, written as each reply ended, cost S3 a fifth of its throughput: a Redis wake-up and an answer to
 * read for every request.)
 *
 * A credit-paid turn's hold is ended (its unused credit given back) only once its row is written, as a
 * reservation is moved: a crash in between leaves a hold whose row exists, which the sweeper ends at that
 * row's cost.
 *
 * It also tracks database health: while ledger writes or pings fail, `databaseHealthy` is false and
 * admission fails closed.
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Config } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import type { Database } from '../db/orm.ts';
import type { CreditPayment } from './credit-payment.ts';
import { insertLedgerRows, type LedgerEntry } from './ledger.ts';
import type { CheckpointRef, PoolStore, ReservationRef } from './pool.store.ts';

/** A credit-paid turn's hold (`credit_hold`): ended, its unused credit given back, once the row is written. */
export interface CreditHold {
  requestId: string;
  payerId: string;
  reservedMicros: Micros;
}

interface Pending {
  entry: LedgerEntry;
  ref: ReservationRef | null;
  credit: CreditHold | null;
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
  readonly #credit: Pick<CreditPayment, 'settleTurn'> | undefined;
  #queue: Pending[] = [];
  /** Pool settlements Redis refused: retried (settling is idempotent), so reservations and stream slots are not held until their TTL. */
  #poolRetries: PoolSettlement[] = [];
  #flushing: Promise<void> | null = null;
  /** One function for every final checkpoint's failure, not a closure each. */
  readonly #finalFailed = (error: unknown) => this.#log.warn({ err: error }, 'final checkpoint failed');
  /** Final checkpoints issued in this turn of the event loop, and the promise their replies wait on. */
  #finals: { ref: CheckpointRef; entry: LedgerEntry }[] = [];
  #finalsWritten: Promise<void> | null = null;
  #tellWritten: () => void = () => undefined;
  #scheduled = false;
  #retryTimer: NodeJS.Timeout | null = null;
  #pingTimer: NodeJS.Timeout | null = null;
  #closed = false;
  #lastFlushAt = Number.NEGATIVE_INFINITY;
  databaseHealthy = true;

  constructor(config: Config, db: Database, store: PoolStore, log: Logger, credit?: Pick<CreditPayment, 'settleTurn'>) {
    this.#db = db;
    this.#credit = credit;
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

  /**
   * Queues one finished request and its final checkpoint. `ref` is null when nothing was reserved; `credit`:
   * the hold of a credit-paid turn. Resolves once the final checkpoint is in Redis's socket (undefined when
   * there is none): a reply's last bytes wait for it.
   */
  record(entry: LedgerEntry, ref: ReservationRef | null, credit: CreditHold | null = null): Promise<void> | undefined {
    this.#queue.push({ entry, ref, credit });
    const written = this.#checkpointFinal(entry, ref ?? credit);
    // A running round picks it up, or schedules the next one when it ends (`flush`).
    if (!this.#flushing) this.#schedule();
    return written;
  }

  /**
   * Records one request and resolves once its ledger row and its pools are written: true then, false when
   * either write failed (it is retried as any other). A refund is committed this way before the reply says
   * `quotaRefunded: true`, so the next request, on any instance, sees it. It rides the next round, not a
   * coalesced one.
   */
  commit(entry: LedgerEntry, ref: ReservationRef | null, credit: CreditHold | null = null): Promise<boolean> {
    return new Promise((committed) => {
      this.#queue.push({ entry, ref, credit, committed });
      void this.#checkpointFinal(entry, ref ?? credit);
      if (!this.#flushing) this.#schedule(true);
    });
  }

  /**
   * Queues the turn's final checkpoint, written with the rest of this turn of the event loop's in its check
   * phase (`#writeFinals`); the promise resolves then. Batching the turns of a tick holds each reply for the
   * rest of the tick's I/O callbacks — microseconds when idle — and saves Redis a command and svc an answer
   * per turn. A round writes what is queued before its ledger write, so a checkpoint reaches Redis ahead of
   * the settlement that deletes it. Should one land after (a script reloaded after a Redis restart), it is
   * never read: the sweeper reads checkpoints only through a live reservation, hold or lease, and the turn's
   * ledger row, written before any settlement, keeps a lease's copy out. A failed write only loses the crash
   * backstop: the round settles the turn as usual.
   */
  #checkpointFinal(entry: LedgerEntry, ref: CheckpointRef | null): Promise<void> | undefined {
    if (ref === null) return undefined;
    this.#finals.push({ ref, entry: { ...entry, final: true } });
    if (this.#finalsWritten) return this.#finalsWritten;
    this.#finalsWritten = new Promise((resolve) => (this.#tellWritten = resolve));
    setImmediate(this.#writeFinals);
    return this.#finalsWritten;
  }

  /**
   * Writes the queued final checkpoints, then lets their replies end: `checkpoint` writes its command to the
   * socket before it returns (not auto-pipelined nor corked, `pool.redis-store.ts`), so they are in the kernel first.
   */
  readonly #writeFinals = (): void => {
    const finals = this.#finals;
    if (finals.length === 0) return;
    const tell = this.#tellWritten;
    this.#finals = [];
    this.#finalsWritten = null;
    try {
      this.#store.checkpoint(finals).catch(this.#finalFailed);
    } catch (error) {
      this.#finalFailed(error);
    } finally {
      tell();
    }
  };

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
    this.#writeFinals();
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
      const holds: Pending[] = [];
      for (const item of batch) {
        if (item.ref !== null) pools.push({ ref: item.ref, costMicros: item.entry.costMicros });
        else if (item.credit !== null) holds.push(item);
      }
      const [pooled, credited] = await Promise.all([this.#settlePools(pools), this.#endHolds(holds)]);
      tell(batch, pooled && credited);
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

  /**
   * Ends the holds of credit-paid turns whose rows are written (their unused credit given back), then forgets
   * their final checkpoints. False when one failed: not retried here — its row exists, so the sweeper ends
   * the hold at that row's cost once its TTL has passed.
   */
  async #endHolds(items: readonly Pending[]): Promise<boolean> {
    const credit = this.#credit;
    if (items.length === 0 || !credit) return true;
    const ended = await Promise.allSettled(items.map(({ entry, credit: hold }) => credit.settleTurn(hold!.payerId, hold!.requestId, hold!.reservedMicros, entry.costMicros)));
    const failed = ended.filter((result) => result.status === 'rejected');
    if (failed.length > 0) this.#log.error({ err: failed[0]!.reason, failed: failed.length }, 'could not end credit holds; the sweeper ends them at their ledger rows');
    await this.#store.dropCheckpoints?.(items.map((item) => item.credit!)).catch((error: unknown) => this.#log.warn({ err: error }, 'could not drop final checkpoints'));
    return failed.length === 0;
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
