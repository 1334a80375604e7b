/**
 * Usage reports for a payer (an account, or an organisation): used / limit / remaining / resetsAt for every
 * class and window — the payer's *current* package read at report time, so a plan change shows at once
 * (also on an open `usageUpdated` subscription) — and the payer's recent turns from the ledger. The
 * pools themselves are moved by the metering pipeline (`server/metering/`).
 */
import { modelClasses, poolWindows, type Config, type ModelClass, type PlanId, type PoolWindow } from '../../config/config.ts';
import { money, type Money } from '../../config/money.ts';
import type { Database } from '../../db/orm.ts';
import type { PoolStore } from '../../metering/pool.store.ts';
import type { PoolWindows } from '../../metering/windows.ts';
import { AppError } from '../../errors/app-error.ts';
import type { Payer } from '../identity/principal.ts';
import type { EntitlementCatalogue } from '../plan/entitlements.ts';
import type { UsageEvents } from './usage.events.ts';
import { listUsageHistory, type HistoryPageArgs, type UsageHistoryPage } from './usage.history.ts';

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
  /** "This payer's pools moved" across instances, for the `usageUpdated` subscription. */
  readonly events: UsageEvents;
  readonly #db: Database;
  readonly #store: PoolStore;
  readonly #windows: PoolWindows;
  readonly #entitlements: EntitlementCatalogue;
  readonly #currency: string;

  constructor(config: Config, db: Database, store: PoolStore, windows: PoolWindows, entitlements: EntitlementCatalogue, events: UsageEvents) {
    this.events = events;
    this.#db = db;
    this.#store = store;
    this.#windows = windows;
    this.#entitlements = entitlements;
    this.#currency = config.currency;
  }

  /** used / limit / remaining / resetsAt for every class and window of the payer. */
  async report(payer: Payer): Promise<UsageReport> {
    const [packageId, used] = await Promise.all([
      this.#currentPackage(payer),
      this.#store.read(payer.id, this.#windows.current()).catch((error: unknown) => {
        throw new AppError('service_unavailable', 'Usage is unavailable right now (the pool store did not answer); try again shortly.', { cause: error });
      }),
    ]);
    const limits = this.#entitlements.of(packageId);
    const windows = this.#windows.current();
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
    return { planId: limits.planId, packageId: limits.packageId, currency: this.#currency, timezone: this.#windows.timezone, pools };
  }

  /** The payer's recent turns from the ledger, newest first (`usageHistory`, `GET …/usage/history`). */
  history(payer: Payer, page: HistoryPageArgs): Promise<UsageHistoryPage> {
    return listUsageHistory(this.#db, payer.id, page);
  }

  /** The payer's package as stored now (a credential caches the one it had when it was resolved). */
  async #currentPackage(payer: Payer): Promise<string> {
    let row: { plan_package: string } | undefined;
    try {
      row = await this.#db.orm.em.getConnection().execute<{ plan_package: string }>(`select plan_package from account where id = ?`, [payer.id], 'get');
    } catch (error) {
      throw new AppError('service_unavailable', 'Usage is unavailable right now (the database did not answer); try again shortly.', { cause: error });
    }
    return row?.plan_package ?? payer.package;
  }
}
