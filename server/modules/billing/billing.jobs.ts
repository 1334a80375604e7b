/**
 * The payment jobs, on a timer on every instance (started by `services.start()`, stopped by `close()`):
 *   - period end: terms that ended start their queued package or return to Free (rows taken with SKIP
 *     LOCKED, so instances share the work and each row changes once);
 *   - reconciliation: orders left `created` are asked about at their provider (a lost notification is
 *     applied) and expire after `payments.orderTtlMinutes`. One instance at a time runs it (a Redis lock
 *     with a lease; in single-instance mode there is only one), so providers are not asked twice; were two
 *     to run anyway, applying a notice is idempotent and expiry takes the order's row lock;
 *   - retention: notices that were not verified are deleted after `payments.unverifiedRetentionDays` (by the
 *     instance holding the same lease).
 */
import type { Logger } from 'pino';
import type { RedisLayer } from '../../infra/redis.ts';
import type { BillingOrders, ReconcileReport } from './billing.service.ts';
import type { SubscriptionService } from './subscription.service.ts';

const defaultIntervalMs = 60_000;

export interface JobRun {
  periodEnds: number;
  /** Null when another instance holds the reconciliation lease. */
  reconcile: ReconcileReport | null;
  /** Unverified notices deleted this round; null when another instance holds the lease. */
  purgedNotices: number | null;
}

export class BillingJobs {
  readonly #orders: BillingOrders;
  readonly #subscriptions: SubscriptionService;
  readonly #redis: RedisLayer;
  readonly #log: Logger;
  readonly #instanceId: string;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> = Promise.resolve();

  constructor(deps: { orders: BillingOrders; subscriptions: SubscriptionService; redis: RedisLayer; log: Logger; instanceId: string }) {
    this.#orders = deps.orders;
    this.#subscriptions = deps.subscriptions;
    this.#redis = deps.redis;
    this.#log = deps.log;
    this.#instanceId = deps.instanceId;
  }

  /** One round of the jobs (the timer calls it; tests and operators may call it for a given moment). */
  async runOnce(now?: Date, options: { leaseMs?: number } = {}): Promise<JobRun> {
    // The lease first: instances whose rounds start together ask at once, so one of them reconciles (asked
    // after the period-end work, a quick instance could finish and release before a slow one asked).
    const leased = await this.#lease(options.leaseMs ?? defaultIntervalMs - 5_000);
    try {
      const periodEnds = await this.#subscriptions.runPeriodEnd(now);
      const reconcile: ReconcileReport | null = leased ? await this.#orders.reconcile({ now }) : null;
      const purgedNotices = leased ? await this.#orders.purgeUnverifiedNotices(now) : null;
      return { periodEnds, reconcile, purgedNotices };
    } finally {
      if (leased) await this.#release();
    }
  }

  start(intervalMs = defaultIntervalMs): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.#running = this.runOnce().catch((error: unknown) => this.#log.warn({ err: (error as Error).message }, 'payment jobs failed'));
    }, intervalMs).unref();
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** Whether this instance runs reconciliation this round: the first to take the lease does. */
  async #lease(ms: number): Promise<boolean> {
    const redis = this.#redis.redis;
    if (!redis) return true;
    try {
      return (await redis.set('billing:reconcile-lease', this.#instanceId, 'PX', ms, 'NX')) === 'OK';
    } catch (error) {
      this.#log.warn({ err: (error as Error).message }, 'reconciliation lease unavailable; skipped this round');
      return false;
    }
  }

  async #release(): Promise<void> {
    await this.#redis.redis
      ?.eval('if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0', 1, 'billing:reconcile-lease', this.#instanceId)
      .catch(() => undefined);
  }
}
