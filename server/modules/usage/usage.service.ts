/**
 * Usage pools per account: the limits a plan package grants (per class × window, in micros), the store
 * that holds used amounts and reservations (Redis or SQL), and the usage report behind
 * `GET /api/membership/usage` and GraphQL `usage`.
 */
import { modelClasses, poolWindows, type Config, type ModelClass, type PlanId, type PoolWindow } from '../../config/config.ts';
import type { Micros } from '../../config/money.ts';
import type { Database } from '../../db/orm.ts';
import { createPubSubFor } from '../../infra/pubsub.ts';
import type { RedisLayer } from '../../infra/redis.ts';
import type { Principal } from '../identity/principal.ts';
import { money, type Money } from '../../config/money.ts';
import { RedisPoolStore } from './pool.redis-store.ts';
import { SqlPoolStore } from './pool.sql-store.ts';
import { notifyingStore } from './pool.notifying-store.ts';
import type { PoolStore } from './pool.store.ts';
import { UsageEvents } from './usage.events.ts';
import { listUsageHistory, type HistoryPageArgs, type UsageHistoryPage } from './usage.history.ts';
import { PoolWindows } from './windows.ts';

export interface PackageLimits {
  planId: PlanId;
  packageId: string;
  requestsPerMinute: number;
  /** Product ids the plan may use; null = all. */
  models: ReadonlySet<string> | null;
  pools: Record<ModelClass, Record<PoolWindow, Micros>>;
}

export interface PoolReport {
  class: ModelClass;
  window: PoolWindow;
  used: Money;
  limit: Money;
  remaining: Money;
  resetsAt: Date;
}

export interface UsageReport {
  planId: PlanId;
  packageId: string;
  currency: string;
  timezone: string;
  pools: PoolReport[];
}

export class UsageService {
  readonly store: PoolStore;
  readonly windows: PoolWindows;
  /** "This account's pools moved" across instances, for the `usageUpdated` subscription. */
  readonly events: UsageEvents;
  readonly #db: Database;
  readonly #packages = new Map<string, PackageLimits>();
  readonly #fallback: PackageLimits;
  readonly #currency: string;

  constructor(config: Config, db: Database, redis: RedisLayer, onError: (error: unknown) => void = () => undefined) {
    this.events = new UsageEvents(createPubSubFor({ redis }, onError), redis.keyPrefix);
    this.store = notifyingStore(redis.redis ? new RedisPoolStore(redis.redis) : new SqlPoolStore(db), this.events);
    this.#db = db;
    this.windows = new PoolWindows(config.timezone);
    this.#currency = config.currency;
    for (const planId of ['free', 'pro', 'max'] as const) {
      const plan = config.plans[planId];
      for (const pkg of plan.packages) {
        const pools = {} as PackageLimits['pools'];
        for (const cls of modelClasses) {
          pools[cls] = { day: plan.pools[cls].day * pkg.multiplier, week: plan.pools[cls].week * pkg.multiplier, month: plan.pools[cls].month * pkg.multiplier };
        }
        this.#packages.set(pkg.id, {
          planId,
          packageId: pkg.id,
          requestsPerMinute: plan.requestsPerMinute,
          models: plan.models ? new Set(plan.models) : null,
          pools,
        });
      }
    }
    this.#fallback = this.#packages.get(config.plans.free.packages[0]!.id)!;
  }

  /** Limits of a plan package; an unknown package gets the Free plan's. */
  limitsFor(packageId: string): PackageLimits {
    return this.#packages.get(packageId) ?? this.#fallback;
  }

  /** used / limit / remaining / resetsAt for every class and window of the caller's account. */
  async report(principal: Principal): Promise<UsageReport> {
    const limits = this.limitsFor(principal.payer.package);
    const windows = this.windows.current();
    const used = await this.store.read(principal.accountId, windows);
    const pools = used.map(({ class: cls, window, usedMicros }) => {
      const limit = limits.pools[cls][window];
      return {
        class: cls,
        window,
        used: money(usedMicros, this.#currency),
        limit: money(limit, this.#currency),
        remaining: money(Math.max(0, limit - usedMicros), this.#currency),
        resetsAt: windows[window].resetsAt,
      };
    });
    pools.sort((a, b) => modelClasses.indexOf(a.class) - modelClasses.indexOf(b.class) || poolWindows.indexOf(a.window) - poolWindows.indexOf(b.window));
    return { planId: limits.planId, packageId: limits.packageId, currency: this.#currency, timezone: this.windows.timezone, pools };
  }

  /** The caller's own recent requests from the ledger, newest first (`usageHistory`, `GET …/usage/history`). */
  history(principal: Principal, page: HistoryPageArgs): Promise<UsageHistoryPage> {
    return listUsageHistory(this.#db, principal.accountId, page);
  }
}
