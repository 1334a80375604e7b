/**
 * The backstop for turns whose instance died. Each instance heartbeats every few seconds; the reservations
 * of an instance that stopped (killed, crashed, cut off) are settled within seconds of its silence (a dead
 * instance's stream slots are freed with them), and any reservation past its TTL too. Each is settled: to the cost of
 * their ledger row when it was written (the instance died between the ledger and Redis), else to their
 * last checkpoint — what the stream had produced a few seconds before the crash, written as an
 * `abandoned` row marked `estimated` — else released at zero. Safe to run on every instance at once: the
 * store lets exactly one sweeper claim each reservation.
 *
 * It also reconciles pool counters against the ledger (SECURITY "reconcile Redis counters against the
 * ledger"): after a Redis restart or flush the counters would otherwise start at zero and hand out the
 * window again.
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Config } from '../config/config.ts';
import type { Database } from '../db/orm.ts';
import { insertLedgerRows, type LedgerEntry } from './ledger.ts';
import { LEASE_PREFIX } from './pool.leasing-store.ts';
import type { ExpiredReservation, LedgerFloor, PoolStore } from './pool.store.ts';
import type { PoolWindows } from './windows.ts';

const RECONCILE_INTERVAL_MS = 5 * 60_000;
const HEARTBEAT_MS = 2_000;
const PAGE = 100;

export class Sweeper {
  readonly #db: Database;
  readonly #store: PoolStore;
  readonly #windows: PoolWindows;
  readonly #log: Logger;
  readonly #currency: string;
  readonly #sweepMs: number;
  #sweepTimer: NodeJS.Timeout | null = null;
  #reconcileTimer: NodeJS.Timeout | null = null;
  #heartbeatTimer: NodeJS.Timeout | null = null;

  constructor(config: Config, db: Database, store: PoolStore, windows: PoolWindows, log: Logger) {
    this.#db = db;
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
    this.#sweepTimer = setInterval(() => void this.sweep().catch((error: unknown) => this.#log.warn({ err: error }, 'reservation sweep failed')), this.#sweepMs).unref();
  }

  /** Stops the timers. Call `leave()` once settlement has flushed everything this instance held. */
  close(): void {
    for (const timer of [this.#sweepTimer, this.#reconcileTimer, this.#heartbeatTimer]) if (timer) clearInterval(timer);
  }

  /** Tells the other instances this one stopped cleanly (nothing of its own is left to sweep). */
  leave(): Promise<void> {
    return this.#store.leave();
  }

  /** Settles the reservations of dead instances and those past their TTL. Returns how many it took. */
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
    return done;
  }

  async #settle(all: ExpiredReservation[]): Promise<number> {
    // Admission leases of a dead instance: settled to what the ledger billed under them (the rest returns),
    // their streams that were still running billed first from their last checkpoint, as exact ones are.
    const leases = all.filter((r) => r.requestId.startsWith(LEASE_PREFIX));
    for (const lease of leases) {
      const checkpoints = (await this.#store.leaseCheckpoints?.(lease.requestId)) ?? [];
      if (checkpoints.length > 0) {
        // Unique on the turn id: a stream that settled before the crash keeps its own row.
        const rows = checkpoints.map((entry) => ({ ...entry, leaseId: lease.requestId, status: 'abandoned' as const, estimated: true, costMicros: Math.min(entry.costMicros, entry.reservedMicros) }));
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
    if (expired.length === 0) return all.length;
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
      // The ledger row first (unique on the turn id), then the pools: a crash in between leaves a row and a
      // reservation, which the next sweep settles to that row's cost. Two sweepers racing write one row and
      // only the one that claims the reservation moves the pools.
      if (entry) await insertLedgerRows(this.#db, this.#currency, [entry]);
      const claimed = await this.#store.settleExpired(reservation.requestId, written ?? entry!.costMicros, reservation.payerId);
      if (claimed && entry) abandoned.push(entry);
    }
    if (abandoned.length > 0) {
      const billed = abandoned.filter((entry) => entry.costMicros > 0).length;
      this.#log.warn({ count: abandoned.length, billedAtCheckpoint: billed }, 'settled reservations abandoned by a dead instance');
    }
    return all.length;
  }

  /**
   * Makes every pool counter at least what the ledger billed in its window. Runs at start and every few
   * minutes on each instance; idempotent; never lowers a counter (it may hold running reservations).
   */
  async reconcile(now = Date.now()): Promise<number> {
    if (!this.#store.raiseToLedger) return 0;
    const current = this.#windows.at(now);
    const since = new Date(Math.min(current.week.startsAt.getTime(), current.month.startsAt.getTime()));
    // A row counts in the window its turn was admitted (and reserved) in — the one settlement charged —
    // not the one it was written in: a request straddling midnight is yesterday's.
    const rows = await this.#db.orm.em.getConnection().execute<{ payer_id: string; class: 'fast' | 'premium'; day: string | null; week: string | null; month: string | null }[]>(
      `select payer_id, class,
         coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as day,
         coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as week,
         coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as month
       from (select payer_id, class, cost_micros, created_at - latency_ms * interval '1 millisecond' as admitted_at
             from usage_ledger where created_at >= ? and cost_micros > 0) as billed
       group by payer_id, class`,
      [current.day.startsAt, current.week.startsAt, current.month.startsAt, since],
      'all',
    );
    const floors: LedgerFloor[] = rows.map((row) => ({
      payerId: row.payer_id,
      class: row.class,
      billed: { day: Number(row.day), week: Number(row.week), month: Number(row.month) },
    }));
    // Called with no floors too: the store then only marks the pools reconciled.
    const raised = await this.#store.raiseToLedger(floors, current);
    if (raised > 0) this.#log.warn({ raised }, 'pool counters were below the ledger (Redis lost data?); raised them');
    return raised;
  }
}

/** The row for a reservation nobody settled: its last checkpoint (capped by the reservation), or a zero row. */
function abandonedEntry(reservation: ExpiredReservation): LedgerEntry {
  const checkpoint = reservation.checkpoint;
  if (checkpoint) {
    return { ...checkpoint, requestId: reservation.requestId, status: 'abandoned', estimated: true, costMicros: Math.min(checkpoint.costMicros, reservation.reservedMicros) };
  }
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
