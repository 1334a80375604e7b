/**
 * CSV exports for a date range (issue 51 item 5): usage per request or per day, payments (orders) and
 * credit entries, of the caller's own account. Each is an async generator of CSV chunks read from
 * PostgreSQL a page at a time by keyset (`(created_at, id) > last`), so a year of a busy account never
 * sits in memory: the route writes each chunk to the response as it comes, waiting for the client to
 * drain. Amounts are decimals of their currency.
 */
import * as authz from '../../authz/authz.ts';
import { formatMicros, formatMinor } from '../../config/money.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { csvLine } from '../../infra/csv.ts';
import { orderRowColumns, type OrderRow } from '../billing/billing.entity.ts';

export interface ExportRange {
  from: Date;
  /** Exclusive. */
  to: Date;
}

/** Rows per query: large enough to keep round trips few, small enough to keep memory flat. */
const PAGE = 2000;
/** The longest range one export covers. */
const MAX_DAYS = 400;

export class Exports {
  readonly #db: Database;
  readonly #timeZone: string;

  constructor(db: Database, timeZone: string) {
    this.#db = db;
    this.#timeZone = timeZone;
  }

  /** `from`/`to` as YYYY-MM-DD (whole days, `to` included) or ISO instants; refused when backwards or too long. */
  range(from: unknown, to: unknown): ExportRange {
    const parse = (value: unknown, name: string, endOfDay: boolean): Date => {
      if (typeof value !== 'string' || value === '') throw new AppError('invalid_request', bilingual('{name} is required, e.g. 2026-01-31.', '{name} 为必填项，例如 2026-01-31。', { name }), { param: name });
      const day = /^\d{4}-\d{2}-\d{2}$/.test(value);
      const date = new Date(day ? `${value}T00:00:00Z` : value);
      if (Number.isNaN(date.getTime())) throw new AppError('invalid_request', bilingual('{name} is not a date (YYYY-MM-DD).', '{name} 不是日期（YYYY-MM-DD）。', { name }), { param: name });
      return day && endOfDay ? new Date(date.getTime() + 86_400_000) : date;
    };
    const range = { from: parse(from, 'from', false), to: parse(to, 'to', true) };
    if (range.to.getTime() <= range.from.getTime()) throw new AppError('invalid_request', bilingual('to must be after from.', 'to 必须晚于 from。'), { param: 'to' });
    if (range.to.getTime() - range.from.getTime() > MAX_DAYS * 86_400_000) {
      throw new AppError('invalid_request', bilingual('An export covers at most {days} days.', '一次导出最多覆盖 {days} 天。', { days: MAX_DAYS }), { param: 'to' });
    }
    return range;
  }

  /** Checks the right before the response starts (`export:read`); returns whose rows to read. */
  owner(actor: authz.Actor): string {
    authz.assert(actor, 'export:read');
    return actor.accountId;
  }

  /** Usage rows, one per request (`request`) or per day and model (`day`). */
  async *usage(accountId: string, range: ExportRange, granularity: 'request' | 'day'): AsyncGenerator<string> {
    if (granularity === 'day') {
      yield csvLine(['day', 'model', 'requests', 'input_tokens', 'output_tokens', 'cost', 'paid_from_credit', 'currency']);
      // Days × models: a few thousand rows at most, aggregated by PostgreSQL.
      const rows = await this.#db.orm.em.fork().execute<DayRow[]>(
        `select to_char(created_at at time zone ?, 'YYYY-MM-DD') as day, model, count(*)::int as requests, sum(input_tokens)::bigint as input_tokens,
                sum(output_tokens)::bigint as output_tokens, sum(cost_micros)::bigint as cost_micros,
                coalesce(sum(cost_micros) filter (where paid_from_credit), 0)::bigint as credit_micros, min(currency) as currency
         from usage_ledger where account_id = ? and created_at >= ? and created_at < ? group by 1, 2 order by 1, 2`,
        [this.#timeZone, accountId, range.from, range.to],
      );
      let chunk = '';
      for (const row of rows) {
        chunk += csvLine([row.day, row.model, row.requests, row.input_tokens, row.output_tokens, formatMicros(Number(row.cost_micros)), formatMicros(Number(row.credit_micros)), row.currency]);
      }
      yield chunk;
      return;
    }
    yield csvLine(['time', 'request_id', 'product', 'model', 'class', 'channel', 'credential_id', 'input_tokens', 'output_tokens', 'cost', 'currency', 'status', 'paid_from_credit']);
    yield* this.#pages<RequestRow>(
      `select id, created_at, request_id, product, model, class, channel, credential_id, input_tokens, output_tokens, cost_micros, currency, status, paid_from_credit
       from usage_ledger where account_id = ? and created_at >= ? and created_at < ?`,
      [accountId, range.from, range.to],
      'created_at',
      (row) =>
        csvLine([
          iso(row.created_at),
          row.request_id,
          row.product,
          row.model,
          row.class,
          row.channel,
          row.credential_id,
          row.input_tokens,
          row.output_tokens,
          formatMicros(Number(row.cost_micros)),
          row.currency,
          row.status,
          row.paid_from_credit === true,
        ]),
    );
  }

  /** Orders (plans and credit top-ups), by creation time. */
  async *payments(accountId: string, range: ExportRange): AsyncGenerator<string> {
    yield csvLine(['created_at', 'order_id', 'what', 'provider', 'state', 'amount', 'currency', 'paid_at', 'refunded_at', 'provider_trade_no']);
    yield* this.#pages<OrderRow>(
      `select ${orderRowColumns} from billing_order where account_id = ? and created_at >= ? and created_at < ?`,
      [accountId, range.from, range.to],
      'created_at',
      (row) =>
        csvLine([iso(row.created_at), row.id, row.package_id, row.provider, row.state, formatMinor(row.amount_minor, row.currency), row.currency, iso(row.paid_at), iso(row.refunded_at), row.provider_trade_no]),
    );
  }

  /** Credit entries, oldest first. */
  async *credits(accountId: string, range: ExportRange): AsyncGenerator<string> {
    yield csvLine(['time', 'entry_id', 'kind', 'amount', 'balance_after', 'currency', 'reference', 'note']);
    yield* this.#pages<CreditRow>(
      `select id, at, kind, amount_micros, balance_after_micros, currency, reference, note from credit_entry where account_id = ? and at >= ? and at < ?`,
      [accountId, range.from, range.to],
      'at',
      (row) => csvLine([iso(row.at), row.id, row.kind, formatMicros(Number(row.amount_micros)), formatMicros(Number(row.balance_after_micros)), row.currency, row.reference, row.note]),
    );
  }

  /** Keyset pages of `sql` ordered by (`timeColumn`, id): each page one chunk of CSV. */
  async *#pages<Row extends { id: string | number }>(sql: string, params: unknown[], timeColumn: string, line: (row: Row) => string): AsyncGenerator<string> {
    let after: { at: Date; id: string | number } | null = null;
    for (;;) {
      // `time >= last` bounds the index scan on (account, time); the rest breaks ties on the id.
      const keyset = after ? ` and ${timeColumn} >= ? and (${timeColumn} > ? or id > ?)` : '';
      const rows: Row[] = await this.#db.orm.em
        .fork()
        .execute<Row[]>(`${sql}${keyset} order by ${timeColumn}, id limit ${PAGE}`, after ? [...params, after.at, after.at, after.id] : params);
      if (rows.length === 0) return;
      let chunk = '';
      for (const row of rows) chunk += line(row);
      yield chunk;
      if (rows.length < PAGE) return;
      const last = rows.at(-1)! as Row & Record<string, unknown>;
      after = { at: new Date(last[timeColumn] as string | Date), id: last.id };
    }
  }
}

function iso(value: Date | string | null): string {
  return value === null ? '' : new Date(value).toISOString();
}

interface DayRow {
  day: string;
  model: string;
  requests: number;
  input_tokens: string | number;
  output_tokens: string | number;
  cost_micros: string | number;
  credit_micros: string | number;
  currency: string;
}

interface RequestRow {
  id: string | number;
  created_at: Date | string;
  request_id: string;
  product: string;
  model: string;
  class: string;
  channel: string;
  credential_id: string;
  input_tokens: number;
  output_tokens: number;
  cost_micros: string | number;
  currency: string;
  status: string;
  paid_from_credit: boolean | null;
}

interface CreditRow {
  id: string | number;
  at: Date | string;
  kind: string;
  amount_micros: string | number;
  balance_after_micros: string | number;
  currency: string;
  reference: string | null;
  note: string | null;
}
