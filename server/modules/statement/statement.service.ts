/**
 * An organisation's monthly statement (issue 51 item 5), for its owner and admins
 * (`organisation:billing:read`): who it is and how it is billed, the month (a calendar month in the
 * configured time zone), usage by model and by key, payments and refunds in the month, the credit ledger's
 * opening and closing balance when it has credit, and totals. Usage comes from the ledger's rollups —
 * `usage_rollup_day` by model, `usage_rollup_key_hour` by key — so a statement costs the same for a quiet
 * organisation and a busy one; payments and credit from their own tables, by their indexes.
 *
 * A statement is read, not stored: its number (`ST-YYYYMM-<organisation>`) names the organisation and the
 * month, so printing it twice gives the same number and, for a month that has ended, the same figures.
 */
import type { Config } from '../../config/config.ts';
import { minorToMicros, money, type Money } from '../../config/money.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type * as authz from '../../authz/authz.ts';
import { isoDate, startOfDay, toLocal, type LocalDate } from '../../infra/calendar.ts';
import type { Organisations } from '../enterprise/organisation.service.ts';
import { orderRowColumns, type OrderRow } from '../billing/billing.entity.ts';
import { CREDIT_PACKAGE_ID } from '../billing/billing.service.ts';
import { creditKinds, type CreditKind } from '../credit/credit.ledger.ts';

export interface StatementUsage {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cost: Money;
}

export interface ModelUsageLine extends StatementUsage {
  model: string;
}

export interface KeyUsageLine extends StatementUsage {
  /** api_key, enterprise_key, session_token or web_session. */
  credentialKind: string;
  /** The key's id, or null for sessions (their requests are one line per kind). */
  keyId: string | null;
  name: string | null;
  prefix: string | null;
  last4: string | null;
  revoked: boolean;
}

export interface StatementPayment {
  orderId: string;
  /** `credit` for a credit top-up, otherwise the package bought. */
  packageId: string;
  kind: 'package' | 'credit';
  provider: string;
  state: string;
  amount: Money;
  paidAt: Date | null;
  refundedAt: Date | null;
}

export interface PaymentTotal {
  currency: string;
  paid: Money;
  refunded: Money;
  /** Paid less refunded. */
  net: Money;
}

export interface CreditMovement {
  kind: CreditKind;
  entries: number;
  amount: Money;
}

export interface StatementCredit {
  opening: Money;
  closing: Money;
  movements: CreditMovement[];
}

export interface StatementOrganisation {
  id: string;
  name: string;
  packageId: string;
  createdAt: Date;
  contactEmail: string | null;
  website: string | null;
  country: string | null;
  ownerEmail: string | null;
}

export interface Statement {
  /** `ST-202611-1A2B3C4D`: the month and the organisation, the same each time it is generated. */
  number: string;
  /** `2026-11`. */
  month: string;
  periodStart: Date;
  /** Exclusive: the first instant of the next month. */
  periodEnd: Date;
  /** The last day the statement covers (YYYY-MM-DD), in `timezone`. */
  lastDay: string;
  timezone: string;
  /** The account's currency (usage and credit). */
  currency: string;
  /** False while the month is still running: its figures are so far. */
  complete: boolean;
  generatedAt: Date;
  organisation: StatementOrganisation;
  usageByModel: ModelUsageLine[];
  usageByKey: KeyUsageLine[];
  usageTotal: StatementUsage;
  payments: StatementPayment[];
  /** Orders refunded in the month (whenever they were paid). */
  refunds: StatementPayment[];
  paymentTotals: PaymentTotal[];
  /** Null when the organisation never had credit by the month's end. */
  credit: StatementCredit | null;
}

interface FiguresRow {
  requests: string | number;
  input_tokens: string | number;
  output_tokens: string | number;
  cost_micros: string | number;
  currency: string;
}

export class Statements {
  readonly #db: Database;
  readonly #organisations: Organisations;
  readonly #timezone: string;
  readonly #currency: string;
  readonly #now: () => number;

  constructor(config: Config, db: Database, deps: { organisations: Organisations; now?: () => number }) {
    this.#db = db;
    this.#organisations = deps.organisations;
    this.#timezone = config.timezone;
    this.#currency = config.currency;
    this.#now = deps.now ?? Date.now;
  }

  /** The statement of `month` (YYYY-MM) for an organisation the caller owns or administers. */
  async organisation(actor: authz.Actor, organisationId: string, month: string): Promise<Statement> {
    const { organisation } = await this.#organisations.access(actor, organisationId, 'organisation:billing:read');
    const now = this.#now();
    const first = parseMonth(month, toLocal(now, this.#timezone));
    const next = first.month === 12 ? { year: first.year + 1, month: 1, day: 1 } : { year: first.year, month: first.month + 1, day: 1 };
    const start = startOfDay(first, this.#timezone);
    const end = startOfDay(next, this.#timezone);
    const lastDay = isoDate({ ...first, day: new Date(Date.UTC(first.year, first.month, 0)).getUTCDate() });
    const em = this.#db.orm.em.fork();
    const [details, byModel, byKey, payments, refunds, credit] = await Promise.all([
      em.execute<{ contact_email: string | null; website: string | null; country: string | null; owner_email: string | null }[]>(
        `select ap.contact_email, ap.website, ap.country,
                (select a.email from organisation_member m join account a on a.id = m.account_id
                  where m.organisation_id = o.id and m.role = 'owner' order by m.created_at limit 1) as owner_email
           from organisation o left join enterprise_application ap on ap.id = o.application_id where o.id = ?`,
        [organisationId],
      ),
      em.execute<(FiguresRow & { model: string })[]>(
        `select model, currency, sum(requests) as requests, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost_micros) as cost_micros
           from usage_rollup_day where payer_id = ? and day >= ?::date and day <= ?::date
          group by model, currency order by sum(cost_micros) desc, model`,
        [organisationId, isoDate(first), lastDay],
      ),
      em.execute<(FiguresRow & { credential_kind: string; credential_id: string; name: string | null; prefix: string | null; last4: string | null; revoked_at: Date | null })[]>(
        `with k as (
           select credential_kind, credential_id, currency, sum(requests) as requests, sum(input_tokens) as input_tokens, sum(output_tokens) as output_tokens, sum(cost_micros) as cost_micros
             from usage_rollup_key_hour where payer_id = ? and hour >= ? and hour < ?
            group by credential_kind, credential_id, currency)
         select k.*, ak.name, ak.prefix, ak.last4, ak.revoked_at
           from k left join api_key ak on k.credential_kind in ('api_key', 'enterprise_key') and ak.id::text = k.credential_id
          order by k.cost_micros desc, ak.name nulls last, k.credential_id`,
        [organisationId, start, end],
      ),
      em.execute<OrderRow[]>(
        `select ${orderRowColumns} from billing_order where account_id = ? and paid_at >= ? and paid_at < ? order by paid_at, id`,
        [organisationId, start, end],
      ),
      em.execute<OrderRow[]>(
        `select ${orderRowColumns} from billing_order
          where account_id = ? and refunded_at >= ? and refunded_at < ? and state = 'refunded' order by refunded_at, id`,
        [organisationId, start, end],
      ),
      this.#credit(organisationId, start, end),
    ]);
    const detail = details[0];
    const figures = (row: FiguresRow): StatementUsage => ({
      requests: Number(row.requests),
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      cost: money(Number(row.cost_micros), row.currency.trim()),
    });
    const usageByModel = byModel.map((row) => ({ model: row.model, ...figures(row) }));
    const mine = usageByModel.filter((line) => line.cost.currency === this.#currency);
    return {
      number: `ST-${first.year}${String(first.month).padStart(2, '0')}-${organisationId.replaceAll('-', '').slice(0, 8).toUpperCase()}`,
      month: isoDate(first).slice(0, 7),
      periodStart: start,
      periodEnd: end,
      lastDay,
      timezone: this.#timezone,
      currency: this.#currency,
      complete: end.getTime() <= now,
      generatedAt: new Date(now),
      organisation: {
        id: organisation.id,
        name: organisation.name,
        packageId: organisation.packageId,
        createdAt: organisation.createdAt,
        contactEmail: detail?.contact_email ?? null,
        website: detail?.website ?? null,
        country: detail?.country ?? null,
        ownerEmail: detail?.owner_email ?? null,
      },
      usageByModel,
      usageByKey: byKey.map((row) => ({
        credentialKind: row.credential_kind,
        keyId: row.name === null ? null : row.credential_id,
        name: row.name,
        prefix: row.prefix,
        last4: row.last4,
        revoked: row.revoked_at !== null,
        ...figures(row),
      })),
      usageTotal: {
        requests: mine.reduce((sum, line) => sum + line.requests, 0),
        inputTokens: mine.reduce((sum, line) => sum + line.inputTokens, 0),
        outputTokens: mine.reduce((sum, line) => sum + line.outputTokens, 0),
        cost: money(
          mine.reduce((sum, line) => sum + line.cost.amountMicros, 0),
          this.#currency,
        ),
      },
      payments: payments.map(paymentView),
      refunds: refunds.map(paymentView),
      paymentTotals: paymentTotals(payments, refunds),
      credit,
    };
  }

  /** The credit ledger across the month: the balance before it, after it, and its entries summed by kind. */
  async #credit(accountId: string, start: Date, end: Date): Promise<StatementCredit | null> {
    const em = this.#db.orm.em.fork();
    const balanceBefore = async (at: Date) => {
      const [row] = await em.execute<{ balance_after_micros: string | number }[]>(
        `select balance_after_micros from credit_entry where account_id = ? and at < ? order by at desc, id desc limit 1`,
        [accountId, at],
      );
      return row ? Number(row.balance_after_micros) : null;
    };
    const [opening, closing, kinds] = await Promise.all([
      balanceBefore(start),
      balanceBefore(end),
      em.execute<{ kind: CreditKind; entries: string | number; amount_micros: string | number }[]>(
        `select kind, count(*) as entries, sum(amount_micros) as amount_micros from credit_entry where account_id = ? and at >= ? and at < ? group by kind`,
        [accountId, start, end],
      ),
    ]);
    if (closing === null) return null;
    const byKind = new Map(kinds.map((row) => [row.kind, row]));
    return {
      opening: money(opening ?? 0, this.#currency),
      closing: money(closing, this.#currency),
      movements: creditKinds
        .filter((kind) => byKind.has(kind))
        .map((kind) => ({ kind, entries: Number(byKind.get(kind)!.entries), amount: money(Number(byKind.get(kind)!.amount_micros), this.#currency) })),
    };
  }
}

/** `YYYY-MM`, a month that has begun (the current one gives its figures so far). */
function parseMonth(month: string, today: LocalDate): LocalDate {
  const match = /^(\d{4})-(\d{2})$/.exec(month);
  const year = Number(match?.[1]);
  const number = Number(match?.[2]);
  if (!match || number < 1 || number > 12 || year < 2000) {
    throw new AppError('invalid_request', bilingual('month must be a month such as 2026-11.', 'month 必须是月份，例如 2026-11。'), { param: 'month' });
  }
  if (year * 12 + number > today.year * 12 + today.month) {
    throw new AppError('invalid_request', bilingual('{month} has not begun: there is no statement for it yet.', '{month} 尚未开始，还没有对账单。', { month }), { param: 'month' });
  }
  return { year, month: number, day: 1 };
}

function paymentView(row: OrderRow): StatementPayment {
  return {
    orderId: row.id,
    packageId: row.package_id,
    kind: row.package_id === CREDIT_PACKAGE_ID ? 'credit' : 'package',
    provider: row.provider,
    state: row.state,
    amount: money(minorToMicros(row.amount_minor, row.currency), row.currency),
    paidAt: row.paid_at ? new Date(row.paid_at) : null,
    refundedAt: row.refunded_at ? new Date(row.refunded_at) : null,
  };
}

/** Paid, refunded and net per currency the organisation paid in (each in its own currency: no exchange rate). */
function paymentTotals(payments: OrderRow[], refunds: OrderRow[]): PaymentTotal[] {
  const totals = new Map<string, { paid: number; refunded: number }>();
  const add = (row: OrderRow, field: 'paid' | 'refunded') => {
    const total = totals.get(row.currency) ?? { paid: 0, refunded: 0 };
    total[field] += minorToMicros(row.amount_minor, row.currency);
    totals.set(row.currency, total);
  };
  for (const row of payments) add(row, 'paid');
  for (const row of refunds) add(row, 'refunded');
  return [...totals].sort(([a], [b]) => a.localeCompare(b)).map(([currency, { paid, refunded }]) => ({
    currency,
    paid: money(paid, currency),
    refunded: money(refunded, currency),
    net: money(paid - refunded, currency),
  }));
}

