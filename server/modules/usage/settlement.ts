/**
 * Settlement, off the critical path but durable. The gateway hands each finished request here once
 * (`record`); rows are written to the append-only ledger in batches (one multi-row insert, unique request
 * id, so settling twice writes one row), and only then are the Redis reservations moved to the actual
 * cost — so a crash in between leaves a reservation whose ledger row exists, which the sweeper settles to
 * that row's cost. A reservation with no ledger row after its TTL (the instance died mid-request) is
 * released and recorded as `abandoned`.
 *
 * It also tracks database health: while ledger writes or pings fail, `databaseHealthy` is false and the
 * gateway's admission fails closed.
 */
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Config, ModelClass } from '../../config/config.ts';
import type { Micros } from '../../config/money.ts';
import type { Database } from '../../db/orm.ts';
import type { LedgerFloor, PoolStore, ReservationRef } from './pool.store.ts';
import type { PoolWindows } from './windows.ts';

export type LedgerStatus = 'ok' | 'refunded' | 'client_disconnected' | 'upstream_failed' | 'abandoned';

export interface LedgerEntry {
  requestId: string;
  accountId: string;
  credentialKind: string;
  credentialId: string;
  channel: string;
  model: string;
  routedModel: string;
  deployment: string | null;
  class: ModelClass;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  estimated: boolean;
  costMicros: Micros;
  reservedMicros: Micros;
  status: LedgerStatus;
  upstreamStatus: number | null;
  latencyMs: number;
}

interface Pending {
  entry: LedgerEntry;
  ref: ReservationRef | null;
}

interface PoolSettlement {
  ref: ReservationRef;
  costMicros: Micros;
}

const COLUMNS = `request_id varchar, account_id uuid, credential_kind varchar, credential_id varchar, channel varchar, model varchar,
  routed_model varchar, deployment varchar, class varchar, stream boolean, input_tokens integer, output_tokens integer, estimated boolean,
  cost_micros bigint, reserved_micros bigint, currency char(3), status varchar, upstream_status integer, latency_ms integer`;
const NAMES = COLUMNS.split(',').map((column) => column.trim().split(' ')[0]).join(', ');
const INSERT_SQL = `insert into usage_ledger (${NAMES}) select ${NAMES} from jsonb_to_recordset($1::jsonb) as x(${COLUMNS}) on conflict (request_id) do nothing`;
const BATCH = 500;
/** Pool settlements kept for retry while Redis is away; beyond that the sweeper settles them after their TTL. */
const MAX_POOL_RETRIES = 100_000;
const RECONCILE_INTERVAL_MS = 5 * 60_000;
/** Under traffic a settlement round waits this long for company; a reservation outlives its request by at most that. */
const COALESCE_MS = 5;
const IDLE_MS = 50;

export class Settlement {
  readonly #db: Database;
  readonly #store: PoolStore;
  readonly #log: Logger;
  readonly #currency: string;
  readonly #sweepMs: number;
  #queue: Pending[] = [];
  /** Pool settlements Redis refused: retried (settling is idempotent), so reservations and stream slots are not held until their TTL. */
  #poolRetries: PoolSettlement[] = [];
  #flushing: Promise<void> | null = null;
  #scheduled = false;
  #retryTimer: NodeJS.Timeout | null = null;
  #sweepTimer: NodeJS.Timeout | null = null;
  #pingTimer: NodeJS.Timeout | null = null;
  #reconcileTimer: NodeJS.Timeout | null = null;
  #closed = false;
  #lastFlushAt = Number.NEGATIVE_INFINITY;
  databaseHealthy = true;

  constructor(config: Config, db: Database, store: PoolStore, log: Logger) {
    this.#db = db;
    this.#store = store;
    this.#log = log;
    this.#currency = config.currency;
    this.#sweepMs = config.gateway.sweepIntervalSeconds * 1000;
  }

  /** Starts the sweeper, the database health probe and (with Redis) the ledger reconciliation. */
  start(windows?: PoolWindows): void {
    if (windows && this.#store.raiseToLedger) {
      const reconcile = () => void this.reconcile(windows).catch((error: unknown) => this.#log.warn({ err: error }, 'pool reconciliation failed'));
      setImmediate(reconcile);
      this.#reconcileTimer = setInterval(reconcile, RECONCILE_INTERVAL_MS);
      this.#reconcileTimer.unref();
    }
    this.#sweepTimer = setInterval(() => void this.sweep().catch((error: unknown) => this.#log.warn({ err: error }, 'reservation sweep failed')), this.#sweepMs);
    this.#sweepTimer.unref();
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
    if (this.#scheduled || this.#flushing) return; // the running round picks it up
    this.#scheduled = true;
    const run = () => {
      this.#scheduled = false;
      void this.flush();
    };
    // After a quiet spell settle at once; under steady traffic gather a few milliseconds of requests into
    // one round (one insert, one Redis call) so settlement does not compete with every next request.
    if (performance.now() - this.#lastFlushAt > IDLE_MS) setImmediate(run);
    else setTimeout(run, COALESCE_MS);
  }

  /** Writes everything queued so far (ledger, then Redis). Resolves when the queue is empty or the DB fails. */
  flush(): Promise<void> {
    if (this.#flushing) return this.#flushing.then(() => (this.#queue.length > 0 || this.#poolRetries.length > 0 ? this.flush() : undefined));
    this.#flushing = this.#drain().finally(() => {
      this.#flushing = null;
    });
    return this.#flushing;
  }

  async #drain(): Promise<void> {
    this.#lastFlushAt = performance.now();
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, BATCH);
      try {
        await this.#insert(batch.map((item) => item.entry));
        this.databaseHealthy = true;
      } catch (error) {
        this.databaseHealthy = false;
        this.#queue.unshift(...batch);
        this.#log.error({ err: error, pending: this.#queue.length }, 'ledger write failed; will retry');
        this.#retrySoon();
        return;
      }
      const pools: PoolSettlement[] = [];
      for (const item of batch) if (item.ref !== null) pools.push({ ref: item.ref, costMicros: item.entry.costMicros });
      await this.#settlePools(pools);
    }
    if (this.#poolRetries.length > 0) await this.#settlePools([]);
  }

  /** Moves the pools (after the ledger rows exist), with earlier settlements Redis refused. */
  async #settlePools(items: PoolSettlement[]): Promise<void> {
    const retries = this.#poolRetries.splice(0, BATCH);
    const all = retries.length > 0 ? retries.concat(items) : items;
    if (all.length === 0) return;
    try {
      await this.#store.settle(all);
    } catch (error) {
      // The ledger rows exist and settling is idempotent: retry shortly; the sweeper is the backstop.
      this.#poolRetries.unshift(...all);
      this.#poolRetries.splice(MAX_POOL_RETRIES);
      this.#log.warn({ err: error, pending: this.#poolRetries.length }, 'pool settlement failed; will retry');
      this.#retrySoon();
    }
  }

  #retrySoon(): void {
    if (this.#retryTimer || this.#closed) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      void this.flush();
    }, 500);
  }

  async #insert(entries: LedgerEntry[]): Promise<void> {
    // The whole batch travels as one JSON parameter, bound by the driver: nothing to escape.
    const rows = entries.map((e) => ({
      request_id: e.requestId,
      account_id: e.accountId,
      credential_kind: e.credentialKind,
      credential_id: e.credentialId,
      channel: e.channel,
      model: e.model,
      routed_model: e.routedModel,
      deployment: e.deployment,
      class: e.class,
      stream: e.stream,
      input_tokens: e.inputTokens,
      output_tokens: e.outputTokens,
      estimated: e.estimated,
      cost_micros: e.costMicros,
      reserved_micros: e.reservedMicros,
      currency: this.#currency,
      status: e.status,
      upstream_status: e.upstreamStatus,
      latency_ms: Math.round(e.latencyMs),
    }));
    await this.#db.query(INSERT_SQL, [JSON.stringify(rows)]);
  }

  /** Settles or releases reservations past their TTL. Safe to run on every instance at once. */
  async sweep(now = Date.now()): Promise<number> {
    let done = 0;
    for (;;) {
      const expired = await this.#store.expired(now, 100);
      if (expired.length === 0) return done;
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
        const cost = settled.get(reservation.requestId);
        const claimed = await this.#store.settleExpired(reservation.requestId, cost ?? 0);
        if (claimed && cost === undefined) {
          abandoned.push({
            requestId: reservation.requestId,
            accountId: reservation.accountId,
            credentialKind: 'unknown',
            credentialId: 'unknown',
            channel: 'unknown',
            model: 'unknown',
            routedModel: 'unknown',
            deployment: null,
            class: reservation.class,
            stream: false,
            inputTokens: 0,
            outputTokens: 0,
            estimated: true,
            costMicros: 0,
            reservedMicros: reservation.reservedMicros,
            status: 'abandoned',
            upstreamStatus: null,
            latencyMs: 0,
          });
        }
        done++;
      }
      if (abandoned.length > 0) {
        await this.#insert(abandoned);
        this.#log.warn({ count: abandoned.length }, 'released reservations abandoned by a dead instance');
      }
      if (expired.length < 100) return done;
    }
  }

  /**
   * Makes every pool counter at least what the ledger billed in its window (SECURITY "reconcile Redis
   * counters against the ledger"): after a Redis restart or flush the counters would otherwise start at
   * zero and hand out the window again. Runs at start and every few minutes on each instance; idempotent.
   */
  async reconcile(windows: PoolWindows, now = Date.now()): Promise<number> {
    if (!this.#store.raiseToLedger) return 0;
    const current = windows.at(now);
    const since = new Date(Math.min(current.week.startsAt.getTime(), current.month.startsAt.getTime()));
    // A row counts in the window its request was admitted (and reserved) in — the one settlement charged —
    // not the one it was written in: a request straddling midnight is yesterday's.
    const rows = await this.#db.orm.em.getConnection().execute<{ account_id: string; class: 'fast' | 'premium'; day: string | null; week: string | null; month: string | null }[]>(
      `select account_id, class,
         coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as day,
         coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as week,
         coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as month
       from (select account_id, class, cost_micros, created_at - latency_ms * interval '1 millisecond' as admitted_at
             from usage_ledger where created_at >= ? and cost_micros > 0) as billed
       group by account_id, class`,
      [current.day.startsAt, current.week.startsAt, current.month.startsAt, since],
      'all',
    );
    const floors: LedgerFloor[] = rows.map((row) => ({
      accountId: row.account_id,
      class: row.class,
      billed: { day: Number(row.day), week: Number(row.week), month: Number(row.month) },
    }));
    const raised = floors.length > 0 ? await this.#store.raiseToLedger(floors, current) : 0;
    if (raised > 0) this.#log.warn({ raised }, 'pool counters were below the ledger (Redis lost data?); raised them');
    return raised;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of [this.#sweepTimer, this.#pingTimer, this.#retryTimer, this.#reconcileTimer]) if (timer) clearInterval(timer);
    await this.flush().catch(() => undefined);
  }
}
