/**
 * The backstop for turns whose instance died. Each instance heartbeats every few seconds; the reservations
 * of an instance that stopped (killed, crashed, cut off) are settled within seconds of its silence (a dead
 * instance's stream slots are freed with them), and any reservation past its TTL too. Each is settled: to the cost of
 * their ledger row when it was written (the instance died between the ledger and Redis), else to their
 * last checkpoint — a finished turn's own row whose ledger write died with the instance (written as
 * recorded), or what a stream had delivered at most a second before the crash (written as an `abandoned`
 * row marked `estimated`), capped at the reservation — else released at zero (no checkpoint: nothing had
 * been delivered). Safe to run on every instance at once: the
 * store lets exactly one sweeper claim each reservation. Turns paid from prepaid credit hold their credit
 * (`credit_hold`) instead of a pool reservation: a hold past its TTL is settled the same way (a finished
 * turn's final checkpoint is in Redis under its own id), its unused credit returned by whichever of the turn
 * and the sweepers ends it first.
 *
 * It also reconciles pool counters, and capped keys' spend counters, against the ledger (SECURITY
 * "reconcile Redis counters against the ledger"): after a Redis restart or flush the counters would
 * otherwise start at zero and hand out the window again. And it keeps the ledger's monthly partitions made ahead (the server makes them at start too).
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Config } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import { ensureLedgerPartitions } from '../db/ledger-upkeep.ts';
import type { Database } from '../db/orm.ts';
import type { CreditPayment } from './credit-payment.ts';
import { billedInWindows, insertLedgerRows, keyBilledInWindows, type LedgerEntry } from './ledger.ts';
import { LEASE_PREFIX } from './pool.leasing-store.ts';
import type { ExpiredReservation, KeyCapFloor, LedgerFloor, PoolStore } from './pool.store.ts';
import type { PoolWindows } from './windows.ts';

const RECONCILE_INTERVAL_MS = 5 * 60_000;
/** Partitions are made two months ahead: a few looks a day leave weeks to spare. */
const PARTITIONS_INTERVAL_MS = 6 * 3_600_000;
const HEARTBEAT_MS = 2_000;
const PAGE = 100;

export class Sweeper {
  readonly #db: Database;
  readonly #store: PoolStore;
  readonly #windows: PoolWindows;
  readonly #log: Logger;
  readonly #currency: string;
  readonly #sweepMs: number;
  /** Credit-paid turns hold their credit outside the pools: their holds are swept the same way. */
  readonly #credit: CreditPayment | undefined;
  #sweepTimer: NodeJS.Timeout | null = null;
  #reconcileTimer: NodeJS.Timeout | null = null;
  #heartbeatTimer: NodeJS.Timeout | null = null;
  #partitionTimer: NodeJS.Timeout | null = null;

  constructor(config: Config, db: Database, store: PoolStore, windows: PoolWindows, log: Logger, credit?: CreditPayment) {
    this.#db = db;
    this.#credit = credit;
    this.#store = store;
    this.#windows = windows;
    this.#log = log;
    this.#currency = config.currency;
    this.#sweepMs = config.gateway.sweepIntervalSeconds * 1000;
    // An admission that finds the counters lost (Redis restarted empty) waits for this before it reserves.
    store.whenUnreconciled?.(() => this.reconcile());
  }

  start(): void {
    const reconcile = () => void this.reconcile().catch((error: unknown) => this.#log.warn({ err: error }, 'pool reconciliation failed'));
    let beaten = false;
    const heartbeat = () =>
      void this.#store.heartbeat().then(
        (unknown) => {
          // Redis forgot this instance after knowing it: it restarted without its data or was flushed, so its
          // pool counters start at zero. Raise them to the ledger now, not at the next 5-minute round.
          if (unknown && beaten && this.#store.raiseToLedger) {
            this.#log.warn('Redis lost its data (restarted or flushed); pools reconciled against the ledger');
            reconcile();
          }
          beaten = true;
        },
        (error: unknown) => this.#log.warn({ err: error }, 'instance heartbeat failed'),
      );
    heartbeat();
    this.#heartbeatTimer = setInterval(heartbeat, HEARTBEAT_MS).unref();
    if (this.#store.raiseToLedger) {
      setImmediate(reconcile);
      this.#reconcileTimer = setInterval(reconcile, RECONCILE_INTERVAL_MS).unref();
    }
    this.#partitionTimer = setInterval(
      () => void ensureLedgerPartitions(this.#db).catch((error: unknown) => this.#log.warn({ err: error }, 'could not make the ledger partitions ahead')),
      PARTITIONS_INTERVAL_MS,
    ).unref();
    this.#sweepTimer = setInterval(() => void this.sweep().catch((error: unknown) => this.#log.warn({ err: error }, 'reservation sweep failed')), this.#sweepMs).unref();
  }

  /** Stops the timers. Call `leave()` once settlement has flushed everything this instance held. */
  close(): void {
    for (const timer of [this.#sweepTimer, this.#reconcileTimer, this.#heartbeatTimer, this.#partitionTimer]) if (timer) clearInterval(timer);
  }

  /** Tells the other instances this one stopped cleanly (nothing of its own is left to sweep). */
  leave(): Promise<void> {
    return this.#store.leave();
  }

  /** Settles the reservations of dead instances and those past their TTL, then expired credit holds. Returns how many it took. */
  async sweep(now = Date.now()): Promise<number> {
    let done = 0;
    for (const source of [() => this.#store.orphaned(PAGE), () => this.#store.expired(now, PAGE)]) {
      // Bounded: each round removes what it read (settled, or dropped from its index when already gone).
      for (let round = 0; round < 1000; round++) {
        const batch = await source();
        if (batch.length === 0) break;
        done += await this.#settle(batch);
      }
    }
    const credit = this.#credit;
    if (credit) {
      for (let round = 0; round < 1000; round++) {
        const batch = await this.#withFinalCheckpoints(await credit.expired(now, PAGE));
        if (batch.length === 0) break;
        done += await this.#settleAbandoned(batch, (reservation, costMicros) => credit.settleExpired(reservation.requestId, reservation.payerId, costMicros), true);
        await this.#store.dropCheckpoints?.(batch);
      }
    }
    return done;
  }

  /**
   * Credit holds with the final checkpoint their turn wrote in Redis (a hold lives in SQL, where only a
   * stream's running checkpoints are kept): a turn that finished but whose row died with its instance is
   * billed as it was recorded.
   */
  async #withFinalCheckpoints(holds: ExpiredReservation[]): Promise<ExpiredReservation[]> {
    if (holds.length === 0 || !this.#store.checkpointsOf) return holds;
    const finals = await this.#store.checkpointsOf(holds);
    return holds.map((hold, i) => (finals[i] ? { ...hold, checkpoint: finals[i] } : hold));
  }

  async #settle(all: ExpiredReservation[]): Promise<number> {
    // Admission leases of a dead instance: settled to what the ledger billed under them (the rest returns),
    // their streams that were still running and their turns whose ledger row died with it billed first
    // from their last checkpoint, as exact ones are.
    const leases = all.filter((r) => r.requestId.startsWith(LEASE_PREFIX));
    for (const lease of leases) {
      const checkpoints = (await this.#store.leaseCheckpoints?.(lease.requestId)) ?? [];
      if (checkpoints.length > 0) {
        // Unique on the turn id: a stream that settled before the crash keeps its own row.
        const rows = checkpoints.map((entry) => ({ ...checkpointRow(entry, entry.reservedMicros), leaseId: lease.requestId }));
        await insertLedgerRows(this.#db, this.#currency, rows);
      }
      const [row] = await this.#db.orm.em
        .getConnection()
        .execute<{ consumed: number | string }[]>(`select coalesce(sum(cost_micros), 0) as consumed from usage_ledger where lease_id = ?`, [lease.requestId], 'all');
      const consumed = Math.min(Number(row?.consumed ?? 0), lease.reservedMicros);
      if (await this.#store.settleExpired(lease.requestId, consumed, lease.payerId)) {
        this.#log.warn({ lease: lease.requestId, consumed, leased: lease.reservedMicros }, 'returned an admission lease of a dead instance');
      }
    }
    const expired = all.filter((r) => !r.requestId.startsWith(LEASE_PREFIX));
    if (expired.length > 0) await this.#settleAbandoned(expired, (reservation, costMicros) => this.#store.settleExpired(reservation.requestId, costMicros, reservation.payerId), false);
    return all.length;
  }

  /**
   * Settles reservations (or credit holds, `paidFromCredit`) nobody settled: to their ledger row's cost when
   * the row was written, else to their last checkpoint, else at zero. The ledger row first (unique on the
   * turn id), then the reservation: a crash in between leaves a row and a reservation, which the next sweep
   * settles to that row's cost. Two sweepers racing write one row and only the one that claims the
   * reservation (`claim`) moves the pools or returns the credit.
   */
  async #settleAbandoned(
    expired: readonly ExpiredReservation[],
    claim: (reservation: ExpiredReservation, costMicros: number) => Promise<boolean>,
    paidFromCredit: boolean,
  ): Promise<number> {
    const ids = expired.map((r) => r.requestId);
    const rows = await this.#db.orm.em
      .getConnection()
      .execute<{ request_id: string; cost_micros: number | string }[]>(
        `select request_id, cost_micros from usage_ledger where request_id in (${ids.map(() => '?').join(', ')})`,
        ids,
        'all',
      );
    const settled = new Map(rows.map((row) => [row.request_id, Number(row.cost_micros)]));
    const abandoned: LedgerEntry[] = [];
    for (const reservation of expired) {
      const written = settled.get(reservation.requestId);
      const entry = written === undefined ? abandonedEntry(reservation) : null;
      if (entry && paidFromCredit) entry.paidFromCredit = true;
      if (entry) await insertLedgerRows(this.#db, this.#currency, [entry]);
      const claimed = await claim(reservation, written ?? entry!.costMicros);
      if (claimed && entry) abandoned.push(entry);
    }
    if (abandoned.length > 0) {
      const billed = abandoned.filter((entry) => entry.costMicros > 0).length;
      const finished = abandoned.filter((entry) => entry.final).length;
      this.#log.warn({ count: abandoned.length, billedAtCheckpoint: billed, paidFromCredit, finished }, 'settled reservations abandoned by a dead instance');
    }
    return expired.length;
  }

  /**
   * Makes every pool counter at least what the ledger billed in its window. Runs at start and every few
   * minutes on each instance; idempotent; never lowers a counter (it may hold running reservations).
   */
  async reconcile(now = Date.now()): Promise<number> {
    if (!this.#store.raiseToLedger) return 0;
    const current = this.#windows.at(now);
    const [floors, keyFloors]: [LedgerFloor[], KeyCapFloor[]] = await Promise.all([billedInWindows(this.#db, current), keyBilledInWindows(this.#db, current)]);
    // Called with no floors too: the store then only marks the pools reconciled.
    const raised = await this.#store.raiseToLedger(floors, current, keyFloors);
    if (raised > 0) this.#log.warn({ raised }, 'pool counters were below the ledger (Redis lost data?); raised them');
    return raised;
  }
}

/**
 * The row a checkpoint stands for, its cost capped by the reservation: a finished turn's (`final`) as it was
 * recorded; a running stream's as `abandoned`, an estimate of what it had delivered.
 */
function checkpointRow(checkpoint: LedgerEntry, reservedMicros: Micros): LedgerEntry {
  const costMicros = Math.min(checkpoint.costMicros, reservedMicros);
  return checkpoint.final ? { ...checkpoint, costMicros } : { ...checkpoint, status: 'abandoned', estimated: true, costMicros };
}

/** The row for a reservation nobody settled: its last checkpoint (capped by the reservation), or a zero row. */
function abandonedEntry(reservation: ExpiredReservation): LedgerEntry {
  const checkpoint = reservation.checkpoint;
  if (checkpoint) return { ...checkpointRow(checkpoint, reservation.reservedMicros), requestId: reservation.requestId };
  return {
    requestId: reservation.requestId,
    clientRequestId: null,
    accountId: reservation.payerId,
    payerKind: 'account',
    payerId: reservation.payerId,
    credentialKind: 'unknown',
    credentialId: 'unknown',
    channel: 'unknown',
    product: 'chat',
    model: 'unknown',
    routedModel: 'unknown',
    deployment: null,
    class: reservation.class,
    stream: false,
    inputTokens: 0,
    outputTokens: 0,
    unit: null,
    unitQuantity: null,
    estimated: true,
    costMicros: 0,
    reservedMicros: reservation.reservedMicros,
    status: 'abandoned',
    upstreamStatus: null,
    latencyMs: 0,
  };
}
