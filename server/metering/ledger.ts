/**
 * The append-only usage ledger (`usage_ledger`, partitioned by month): one row per turn, unique on the turn
 * id, so settling twice writes one row; the same statement adds the rows to the usage rollups. Rows are written in batches: by COPY on PostgreSQL, and as one JSON parameter bound
 * by the driver on embedded PGlite (and where COPY finds a turn already written).
 */
import type { ModelClass } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import type { Database } from '../db/orm.ts';
import type { CurrentWindows } from './windows.ts';

export type Product = 'chat' | 'search' | 'image' | 'speech' | 'music' | 'embedding';

/** What a product produces besides tokens, recorded on its ledger row. */
export type MeterUnit = 'image' | 'audio_second' | 'search';

export type LedgerStatus = 'ok' | 'refunded' | 'client_disconnected' | 'upstream_failed' | 'abandoned';

export interface LedgerEntry {
  /** The turn id (svc-generated). */
  requestId: string;
  clientRequestId: string | null;
  /** Whose credential made the call. */
  accountId: string;
  payerKind: 'account' | 'organisation';
  /** Whose pools were charged. */
  payerId: string;
  credentialKind: string;
  credentialId: string;
  channel: string;
  product: Product;
  model: string;
  routedModel: string;
  deployment: string | null;
  class: ModelClass;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  unit: MeterUnit | null;
  unitQuantity: number | null;
  estimated: boolean;
  costMicros: Micros;
  reservedMicros: Micros;
  status: LedgerStatus;
  upstreamStatus: number | null;
  latencyMs: number;
  /** The admission lease the turn was admitted under (pool.leasing-store.ts); absent or null otherwise. */
  leaseId?: string | null;
  /** The pools were exhausted and the turn was paid from the payer's prepaid credit (credit.service.ts); absent otherwise. */
  paidFromCredit?: true;
  /** A failed turn: the envelope's `code` and `stage` its client was told; absent or null otherwise. */
  errorCode?: string | null;
  errorStage?: string | null;
  /** The address an organisation key connected from; absent or null for every other credential. */
  clientIp?: string | null;
  /**
   * A checkpoint of a finished turn (settlement.ts): the sweeper writes it as it is. Never a column: the
   * ledger reads only `FIELDS`.
   */
  final?: true;
}

/** Each column and the `LedgerEntry` field it is read from, with the type `json_to_recordset` reads it as. */
const FIELDS: readonly [column: string, field: keyof LedgerEntry, type: string][] = [
  ['request_id', 'requestId', 'varchar'],
  ['client_request_id', 'clientRequestId', 'varchar'],
  ['account_id', 'accountId', 'uuid'],
  ['payer_kind', 'payerKind', 'varchar'],
  ['payer_id', 'payerId', 'uuid'],
  ['credential_kind', 'credentialKind', 'varchar'],
  ['credential_id', 'credentialId', 'varchar'],
  ['channel', 'channel', 'varchar'],
  ['product', 'product', 'varchar'],
  ['model', 'model', 'varchar'],
  ['routed_model', 'routedModel', 'varchar'],
  ['deployment', 'deployment', 'varchar'],
  ['class', 'class', 'varchar'],
  ['stream', 'stream', 'boolean'],
  ['input_tokens', 'inputTokens', 'integer'],
  ['output_tokens', 'outputTokens', 'integer'],
  ['unit', 'unit', 'varchar'],
  ['unit_quantity', 'unitQuantity', 'numeric'],
  ['estimated', 'estimated', 'boolean'],
  ['cost_micros', 'costMicros', 'bigint'],
  ['reserved_micros', 'reservedMicros', 'bigint'],
  ['status', 'status', 'varchar'],
  ['upstream_status', 'upstreamStatus', 'integer'],
  ['latency_ms', 'latencyMs', 'numeric'],
  ['lease_id', 'leaseId', 'varchar'],
  ['paid_from_credit', 'paidFromCredit', 'boolean'],
  // Last, and null on an ordinary row: `copyText` writes the three as one constant then.
  ['error_code', 'errorCode', 'varchar'],
  ['error_stage', 'errorStage', 'varchar'],
  ['client_ip', 'clientIp', 'varchar'],
];
/** How many of `FIELDS`, from the end, say how a request failed or where it came from (null when neither). */
const STORY_FIELDS = 3;
const COLUMNS = `${FIELDS.map(([column]) => column).join(', ')}, currency`;
const value = ([, field]: (typeof FIELDS)[number]) => (field === 'latencyMs' ? `round(x."latencyMs")::integer` : `x."${field}"`);
/**
 * The entries travel as they are (`JSON.stringify(entries)`, no row objects built for them) and are renamed
 * to columns here; a field left out (`leaseId`, `errorCode`, …) reads as null. `json`, not `jsonb`: the batch is read once,
 * so converting it to jsonb first was wasted work in PostgreSQL (~20 µs a row).
 */
const INSERT_SQL = `insert into usage_ledger (${COLUMNS})
  select ${FIELDS.map(value).join(', ')}, $2 from json_to_recordset($1::json) as x(${FIELDS.map(([, field, type]) => `"${field}" ${type}`).join(', ')})
   where not exists (select 1 from usage_ledger_request as r where r.request_id = x."requestId")`;

/** The same columns for `copy`, which PostgreSQL takes for about two thirds of the insert's CPU. */
const COPY_SQL = `copy usage_ledger (${COLUMNS}) from stdin`;

/** Channel of a credential kind: where a request came from. */
export const channels: Record<string, string> = { web_session: 'web', session_token: 'cli', api_key: 'api', enterprise_key: 'enterprise' };

/**
 * Writes the batch, keeping a turn's first row. On PostgreSQL by COPY, which has no `on conflict`: a batch
 * with a turn already written (a round retried after its commit was lost, a turn the sweeper wrote) is
 * refused whole, and goes again as the insert, which skips that row.
 *
 * The ledger is partitioned by month, so "one row per turn" is `usage_ledger_request`'s key, written by the
 * ledger's statement trigger with the rollups (Migration20261209010000_ledger_partitions). Two writers of one
 * turn at the same moment: the second waits for the first to commit and is refused; its next try skips the row.
 */
export async function insertLedgerRows(db: Pick<Database, 'copy' | 'query'>, currency: string, entries: readonly LedgerEntry[]): Promise<void> {
  if (db.copy) {
    try {
      await db.copy(COPY_SQL, copyText(entries, currency));
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
    }
  }
  // A turn twice in one batch: its first row.
  const seen = new Set<string>();
  const batch = JSON.stringify(entries.filter((entry) => !seen.has(entry.requestId) && seen.add(entry.requestId)));
  for (let attempt = 1; ; attempt++) {
    try {
      await db.query(INSERT_SQL, [batch, currency], 'svc_ledger_insert_once');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION || attempt === 3) throw error;
    }
  }
}

const UNIQUE_VIOLATION = '23505';

/**
 * The entries in COPY's text format: a line each, the columns in `FIELDS` order and the currency, separated
 * by tabs, `\N` for null. Values are what `JSON.stringify` would send the insert: a number that is not finite
 * is null, and the latency is rounded as the insert rounds it (half away from zero; it is never negative).
 */
function copyText(entries: readonly LedgerEntry[], currency: string): string {
  const lineEnd = `${copyValue(currency)}\n`;
  // A row that neither failed nor came from an organisation key ends the same way every time: one
  // concatenation rather than two per null column (the hot path's settlement pays for each).
  const plainEnd = `${'\\N\t'.repeat(STORY_FIELDS)}${lineEnd}`;
  const base = FIELDS.length - STORY_FIELDS;
  let text = '';
  for (const entry of entries) {
    for (let i = 0; i < base; i++) {
      const field = FIELDS[i]![1];
      text += `${copyValue(field === 'latencyMs' ? Math.round(entry.latencyMs) : entry[field])}\t`;
    }
    if (entry.errorCode == null && entry.errorStage == null && entry.clientIp == null) {
      text += plainEnd;
      continue;
    }
    for (let i = base; i < FIELDS.length; i++) text += `${copyValue(entry[FIELDS[i]![1]])}\t`;
    text += lineEnd;
  }
  return text;
}

function copyValue(value: string | number | boolean | null | undefined): string {
  if (typeof value === 'string') return HAS_COPY_SPECIAL.test(value) ? value.replace(COPY_SPECIAL, (char) => COPY_ESCAPES[char]!) : value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return '\\N';
}

/** What COPY's text format reads as a separator or an escape, inside a value. */
const COPY_SPECIAL = /[\\\t\n\r]/g;
/**
 * The same, looked for first: a row's ~15 strings (ids, names) almost never hold one, and `replace` with a
 * global pattern and a function cost ~850 instructions a call even when it found nothing (~12 k of
 * `copyText`'s ~25 k a row); a non-global `test` is about a quarter of that.
 */
const HAS_COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** What the ledger billed one payer for one class in each of the current windows (micros). */
export interface BilledInWindows {
  payerId: string;
  class: ModelClass;
  billed: Record<'day' | 'week' | 'month', Micros>;
}

/**
 * What the ledger billed in each current window, per payer and class — every payer, or one. The sweeper's
 * reconciliation raises pool counters to it; spend alerts confirm a crossing with it (the pool counters
 * also hold running reservations, which may yet be refunded). A row counts in the window its turn was
 * admitted (and reserved) in — the one settlement charged — not the one it was written in: a request
 * straddling midnight is yesterday's.
 */
export async function billedInWindows(db: Database, windows: CurrentWindows, payerId?: string): Promise<BilledInWindows[]> {
  const since = new Date(Math.min(windows.week.startsAt.getTime(), windows.month.startsAt.getTime()));
  const params: unknown[] = [windows.day.startsAt, windows.week.startsAt, windows.month.startsAt, since];
  if (payerId !== undefined) params.push(payerId);
  const rows = await db.orm.em.getConnection().execute<{ payer_id: string; class: ModelClass; day: string | null; week: string | null; month: string | null }[]>(
    `select payer_id, class,
       coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as day,
       coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as week,
       coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as month
     from (select payer_id, class, cost_micros, created_at - latency_ms * interval '1 millisecond' as admitted_at
           from usage_ledger where created_at >= ? and cost_micros > 0 and paid_from_credit is not true${payerId === undefined ? '' : ' and payer_id = ?'}) as billed
     group by payer_id, class`,
    params,
    'all',
  );
  return rows.map((row) => ({ payerId: row.payer_id, class: row.class, billed: { day: Number(row.day), week: Number(row.week), month: Number(row.month) } }));
}

/** What the ledger billed one capped key in the current day and month (micros). */
export interface KeyBilledInWindows {
  keyId: string;
  payerId: string;
  billed: Record<'day' | 'month', Micros>;
}

/**
 * What the ledger billed each key that has a spend cap, in the current day and month, counted as its
 * counters count (the window a turn was admitted in; credit-paid turns count too: they hold the key's caps
 * as pool-paid ones do).
 * The sweeper's reconciliation raises the counters to it after Redis lost them (every payer); spend alerts
 * read one payer's keys from it.
 */
export async function keyBilledInWindows(db: Database, windows: CurrentWindows, payerId?: string): Promise<KeyBilledInWindows[]> {
  const params: unknown[] = [windows.day.startsAt, windows.month.startsAt, windows.month.startsAt];
  if (payerId !== undefined) params.push(payerId, payerId);
  const rows = await db.orm.em.getConnection().execute<{ credential_id: string; payer_id: string; day: string | null; month: string | null }[]>(
    `select credential_id, payer_id,
       coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as day,
       coalesce(sum(cost_micros) filter (where admitted_at >= ?), 0) as month
     from (select credential_id, payer_id, cost_micros, created_at - latency_ms * interval '1 millisecond' as admitted_at
           from usage_ledger
           where created_at >= ? and cost_micros > 0${payerId === undefined ? '' : ' and payer_id = ?'}
             and credential_id in (select id::text from api_key where (budget_day_micros is not null or budget_month_micros is not null)${payerId === undefined ? '' : ' and account_id = ?'})) as billed
     group by credential_id, payer_id`,
    params,
    'all',
  );
  return rows.map((row) => ({ keyId: row.credential_id, payerId: row.payer_id, billed: { day: Number(row.day), month: Number(row.month) } }));
}
