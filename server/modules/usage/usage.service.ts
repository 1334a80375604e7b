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
import { SingleFlight } from '../../infra/single-flight.ts';
import type { Payer } from '../../authz/principal.ts';
import type { EntitlementCatalogue } from '../plan/entitlements.ts';
import { costBreakdown, type CostBreakdownView } from './cost-breakdown.ts';
import type { UsageEvents } from './usage.events.ts';
import { findUsageRecord, listUsageHistory, type HistoryPageArgs, type UsageHistoryPage, type UsageRecord } from './usage.history.ts';

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
  readonly #pricing: Pick<Config, 'models' | 'promotion' | 'currency'>;
  readonly #reports = new SingleFlight<UsageReport>();

  constructor(config: Config, db: Database, store: PoolStore, windows: PoolWindows, entitlements: EntitlementCatalogue, events: UsageEvents) {
    this.events = events;
    this.#db = db;
    this.#store = store;
    this.#windows = windows;
    this.#entitlements = entitlements;
    this.#currency = config.currency;
    this.#pricing = config;
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

  /**
   * The report for a subscription's wake-up (`usageUpdated`, `organisationUsageUpdated`): the payer's
   * subscriptions on this instance woken with the same generation share one read, so an update costs one
   * PostgreSQL and one Redis read per payer, not one per open subscription (10,000 of them starved the
   * database pool admission needs). A read begun before a change is never shared with the wake-up the
   * change causes: that one has a newer generation. Without a generation, `report`.
   */
  reportFor(payer: Payer, generation?: number): Promise<UsageReport> {
    return this.#reports.run(payer.id, generation, () => this.report(payer));
  }

  /** The payer's recent turns from the ledger, newest first (`usageHistory`, `GET …/usage/history`). */
  history(payer: Payer, page: HistoryPageArgs): Promise<UsageHistoryPage> {
    return listUsageHistory(this.#db, payer.id, page);
  }

  /**
   * One of the payer's requests by the id its client saw (`myRequest`, `GET …/usage/requests/{id}`); null
   * when there is none or it is someone else's.
   */
  request(payer: Payer, requestId: string): Promise<UsageRecord | null> {
    return findUsageRecord(this.#db, requestId, payer.id);
  }

  /** Any request by the id its client saw (staff: the caller asserts `account:read`). */
  anyRequest(requestId: string): Promise<UsageRecord | null> {
    return findUsageRecord(this.#db, requestId, null);
  }

  /** How a request's cost was computed, by the pricing code that billed it (`cost-breakdown.ts`). */
  pricing(record: UsageRecord): CostBreakdownView | null {
    return costBreakdown(this.#pricing, record);
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
