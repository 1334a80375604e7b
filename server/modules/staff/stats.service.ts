/**
 * The staff dashboard's numbers (`stats(range)`, DESIGN §8.2): requests, tokens in and out, spend, errors
 * and refunds per day and per model, read from the ledger's rollup of the whole service by day, model and
 * status (`usage_rollup_model_day`, kept by the ledger's insert: Migration20261209010000_ledger_partitions),
 * never from the ledger rows; revenue per day from the orders' daily rollup (`billing_revenue_day`), never
 * from the orders; and the enterprise review queue's length.
 *
 * Days are calendar days in the configured `timezone`, cut exactly where the pools cut them (the day starts
 * come from `PoolWindows`; the rollups cut days in the same zone), the last N of them with today included
 * so far. 90 days are at most a few thousand rollup rows, read by one range of the rollup's key, and
 * folded into days, models and totals here.
 */
import type { Config } from '../../config/config.ts';
import { formatMinor, money, type Money } from '../../config/money.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { LedgerStatus } from '../../metering/turn.ts';
import type { PoolWindows } from '../../metering/windows.ts';
import * as authz from '../../authz/authz.ts';

/** The dashboard's range picker: the last 7, 30 or 90 days (today included). */
export const statsRanges = { last_7_days: 7, last_30_days: 30, last_90_days: 90 } as const;
export type StatsRange = keyof typeof statsRanges;

export interface StatsFigures {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** Cost charged to pools, at effective prices, in the configured currency. */
  spend: Money;
  /** Requests that did not end `ok` (refunded, client left, model failed, abandoned). */
  errors: number;
  /** Requests refunded in full (failed before any output). */
  refunds: number;
}

export interface StatsRevenue {
  currency: string;
  /** Paid orders in the period (by when they were paid), in minor units. */
  paidMinor: number;
  paidAmount: string;
  paidOrders: number;
  /** Refunds in the period (by when they were refunded), in minor units. */
  refundedMinor: number;
  refundedAmount: string;
  refundedOrders: number;
}

export interface StatsDay extends StatsFigures {
  /** The local calendar date, YYYY-MM-DD, in the configured time zone. */
  date: string;
  /** Local midnight that starts the day. */
  startsAt: Date;
  revenue: StatsRevenue[];
}

export interface StatsModel extends StatsFigures {
  model: string;
}

export interface StatsStatus {
  status: LedgerStatus;
  requests: number;
}

export interface Stats {
  range: StatsRange;
  days: number;
  /** Local midnight of the first day. */
  from: Date;
  /** Local midnight after today: the end of the range (exclusive). */
  to: Date;
  timezone: string;
  currency: string;
  totals: StatsFigures;
  /** Every day of the range, oldest first; days without requests are zeros. */
  byDay: StatsDay[];
  /** Every model with requests in the range, most requests first. */
  byModel: StatsModel[];
  /** Requests per ledger status, `ok` included, most first. */
  byStatus: StatsStatus[];
  /** Revenue per currency over the range. */
  revenue: StatsRevenue[];
}

/** The enterprise review queue as the dashboard shows it. */
export interface ReviewQueueSummary {
  /** Applications waiting for staff. */
  pending: number;
  /** When the oldest waiting application was submitted; null when none waits. */
  oldestSubmittedAt: Date | null;
  /** The oldest waiting application, for a link to `/admin/applications/:id`; null when none waits. */
  oldestApplicationId: string | null;
}

/**
 * Where the review queue's numbers come from: the enterprise module (applications) implements it and
 * `services.ts` passes it to `StatsService`. Until then the queue reads as empty.
 */
export interface ReviewQueueSource {
  reviewQueueSummary(): Promise<ReviewQueueSummary>;
}

const emptyQueue: ReviewQueueSource = {
  reviewQueueSummary: async () => ({ pending: 0, oldestSubmittedAt: null, oldestApplicationId: null }),
};

/**
 * The ledger side of `stats`, from the rollup. Parameters: the currency, the first and the last local date.
 * `requests` counts every row; `cost_micros` only rows in the configured currency (the ledger's rows carry
 * theirs). Exported so the plan test can EXPLAIN exactly this text.
 */
export const LEDGER_STATS_SQL = `select to_char(day, 'YYYY-MM-DD') as day, model, status,
       sum(requests) as requests,
       sum(input_tokens) as input_tokens,
       sum(output_tokens) as output_tokens,
       coalesce(sum(cost_micros) filter (where currency = ?), 0) as cost_micros
  from usage_rollup_model_day
 where day >= ?::date and day <= ?::date
 group by 1, 2, 3`;

/**
 * Paid and refunded orders by currency, kind and local day, from the daily revenue rollup
 * (`billing_revenue_day`, kept by the orders' trigger: Migration20261210060000_revenue_rollup), never from
 * the orders. Parameters: the first and the last local date. Exported so the plan test can EXPLAIN it.
 */
export const REVENUE_STATS_SQL = `select currency, kind, to_char(day, 'YYYY-MM-DD') as day, amount_minor, orders
  from billing_revenue_day
 where day >= ?::date and day <= ?::date`;

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

interface LedgerGroup {
  /** The local date, YYYY-MM-DD. */
  day: string;
  model: string;
  status: LedgerStatus;
  requests: string | number;
  input_tokens: string | number;
  output_tokens: string | number;
  cost_micros: string | number;
}

interface RevenueGroup {
  currency: string;
  kind: 'paid' | 'refunded';
  /** The local date, YYYY-MM-DD. */
  day: string;
  amount_minor: string | number;
  orders: string | number;
}

export class StatsService {
  readonly #db: Database;
  readonly #windows: PoolWindows;
  readonly #currency: string;
  readonly #reviewQueue: ReviewQueueSource;

  constructor(config: Config, db: Database, windows: PoolWindows, deps: { reviewQueue?: ReviewQueueSource } = {}) {
    this.#db = db;
    this.#windows = windows;
    this.#currency = config.currency;
    this.#reviewQueue = deps.reviewQueue ?? emptyQueue;
  }

  /** The dashboard's figures over the last `range` days (staff: `stats:read`). */
  async stats(actor: authz.Actor, range: StatsRange, now = Date.now()): Promise<Stats> {
    authz.assert(actor, 'stats:read');
    const days = statsRanges[range];
    if (days === undefined) throw new AppError('invalid_request', bilingual('range must be one of {ranges}.', 'range 必须是 {ranges} 之一。', { ranges: Object.keys(statsRanges).join(', ') }), { param: 'range' });
    const calendar = this.#days(days, now);
    const from = calendar[0]!.startsAt;
    const to = this.#windows.at(now).day.resetsAt;
    const connection = this.#db.orm.em.getConnection();
    const [ledger, orders] = await Promise.all([
      connection.execute<LedgerGroup[]>(LEDGER_STATS_SQL, [this.#currency, calendar[0]!.date, calendar.at(-1)!.date], 'all'),
      connection.execute<RevenueGroup[]>(REVENUE_STATS_SQL, [calendar[0]!.date, calendar.at(-1)!.date], 'all'),
    ]);

    const byDay = calendar.map((day) => ({ ...day, ...this.#zero(), revenue: new Map<string, StatsRevenue>() }));
    const dayIndex = new Map(calendar.map((day, index) => [day.date, index]));
    const byModel = new Map<string, Sum & { model: string }>();
    const byStatus = new Map<LedgerStatus, number>();
    const totals = this.#zero();
    for (const group of ledger) {
      const figures = {
        requests: Number(group.requests),
        inputTokens: Number(group.input_tokens),
        outputTokens: Number(group.output_tokens),
        costMicros: Number(group.cost_micros),
        errors: group.status === 'ok' ? 0 : Number(group.requests),
        refunds: group.status === 'refunded' ? Number(group.requests) : 0,
      };
      const day = dayIndex.get(group.day);
      if (day !== undefined) add(byDay[day]!, figures);
      const model = byModel.get(group.model) ?? { model: group.model, ...this.#zero() };
      byModel.set(group.model, model);
      add(model, figures);
      add(totals, figures);
      byStatus.set(group.status, (byStatus.get(group.status) ?? 0) + figures.requests);
    }

    const revenue = new Map<string, StatsRevenue>();
    for (const group of orders) {
      const day = dayIndex.get(group.day);
      if (day !== undefined) addRevenue(byDay[day]!.revenue, group);
      addRevenue(revenue, group);
    }

    return {
      range,
      days,
      from,
      to,
      timezone: this.#windows.timezone,
      currency: this.#currency,
      totals: this.#finish(totals),
      byDay: byDay.map((day) => ({ ...this.#finish(day), date: day.date, startsAt: day.startsAt, revenue: sortedRevenue(day.revenue) })),
      byModel: [...byModel.values()].map((model): StatsModel => ({ ...this.#finish(model), model: model.model })).sort((a, b) => b.requests - a.requests || a.model.localeCompare(b.model)),
      byStatus: [...byStatus].map(([status, requests]) => ({ status, requests })).sort((a, b) => b.requests - a.requests),
      revenue: sortedRevenue(revenue),
    };
  }

  /** The review queue's length and its oldest application (staff: `stats:read`); empty until enterprise wires in. */
  async reviewQueue(actor: authz.Actor): Promise<ReviewQueueSummary> {
    authz.assert(actor, 'stats:read');
    return this.#reviewQueue.reviewQueueSummary();
  }

  /** The last `count` local days, oldest first, each with its date and the instant it starts. */
  #days(count: number, now: number): { date: string; startsAt: Date }[] {
    const today = this.#windows.at(now).day.startsAt.getTime();
    const days: { date: string; startsAt: Date }[] = [];
    for (let back = count - 1; back >= 0; back--) {
      // Noon of the wanted day, give or take the hours clocks moved since: inside it whatever DST did.
      const day = this.#windows.at(today - back * dayMs + 12 * hourMs).day;
      days.push({ date: day.key.slice(1), startsAt: day.startsAt });
    }
    return days;
  }

  #zero(): Sum {
    return { requests: 0, inputTokens: 0, outputTokens: 0, costMicros: 0, errors: 0, refunds: 0 };
  }

  #finish(sum: Sum): StatsFigures {
    return {
      requests: sum.requests,
      inputTokens: sum.inputTokens,
      outputTokens: sum.outputTokens,
      spend: money(sum.costMicros, this.#currency),
      errors: sum.errors,
      refunds: sum.refunds,
    };
  }
}

interface Sum {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  errors: number;
  refunds: number;
}

function add(into: Sum, figures: Sum): void {
  into.requests += figures.requests;
  into.inputTokens += figures.inputTokens;
  into.outputTokens += figures.outputTokens;
  into.costMicros += figures.costMicros;
  into.errors += figures.errors;
  into.refunds += figures.refunds;
}

function addRevenue(into: Map<string, StatsRevenue>, group: RevenueGroup): void {
  const currency = group.currency.trim();
  let row = into.get(currency);
  if (!row) into.set(currency, (row = { currency, paidMinor: 0, paidAmount: '', paidOrders: 0, refundedMinor: 0, refundedAmount: '', refundedOrders: 0 }));
  if (group.kind === 'paid') {
    row.paidMinor += Number(group.amount_minor);
    row.paidOrders += Number(group.orders);
  } else {
    row.refundedMinor += Number(group.amount_minor);
    row.refundedOrders += Number(group.orders);
  }
  row.paidAmount = formatMinor(row.paidMinor, currency);
  row.refundedAmount = formatMinor(row.refundedMinor, currency);
}

function sortedRevenue(rows: Map<string, StatsRevenue>): StatsRevenue[] {
  return [...rows.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}
