/**
 * The append-only usage ledger (`usage_ledger`): one row per turn, unique on the turn id, so settling
 * twice writes one row. Rows are written in batches: by COPY on PostgreSQL, and as one JSON parameter bound
 * by the driver on embedded PGlite (and where COPY finds a turn already written).
 */
import type { ModelClass } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import type { Database } from '../db/orm.ts';

export type Product = 'chat' | 'search' | 'image' | 'speech' | 'music';

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
];
const COLUMNS = `${FIELDS.map(([column]) => column).join(', ')}, currency`;
const value = ([, field]: (typeof FIELDS)[number]) => (field === 'latencyMs' ? `round(x."latencyMs")::integer` : `x."${field}"`);
/**
 * The entries travel as they are (`JSON.stringify(entries)`, no row objects built for them) and are renamed
 * to columns here; a field left out (`leaseId`) reads as null. `json`, not `jsonb`: the batch is read once,
 * so converting it to jsonb first was wasted work in PostgreSQL (~20 µs a row).
 */
const INSERT_SQL = `insert into usage_ledger (${COLUMNS})
  select ${FIELDS.map(value).join(', ')}, $2 from json_to_recordset($1::json) as x(${FIELDS.map(([, field, type]) => `"${field}" ${type}`).join(', ')})
  on conflict (request_id) do nothing`;

/** The same columns for `copy`, which PostgreSQL takes for about two thirds of the insert's CPU. */
const COPY_SQL = `copy usage_ledger (${COLUMNS}) from stdin`;

/** Channel of a credential kind: where a request came from. */
export const channels: Record<string, string> = { web_session: 'web', session_token: 'cli', api_key: 'api', enterprise_key: 'enterprise' };

/**
 * Writes the batch, keeping a turn's first row. On PostgreSQL by COPY, which has no `on conflict`: a batch
 * with a turn already written (a round retried after its commit was lost, a turn the sweeper wrote) is
 * refused whole, and goes again as the insert, which skips that row.
 */
export async function insertLedgerRows(db: Database, currency: string, entries: readonly LedgerEntry[]): Promise<void> {
  if (db.copy) {
    try {
      await db.copy(COPY_SQL, copyText(entries, currency));
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
    }
  }
  await db.query(INSERT_SQL, [JSON.stringify(entries), currency], 'svc_ledger_insert');
}

const UNIQUE_VIOLATION = '23505';

/**
 * The entries in COPY's text format: a line each, the columns in `FIELDS` order and the currency, separated
 * by tabs, `\N` for null. Values are what `JSON.stringify` would send the insert: a number that is not finite
 * is null, and the latency is rounded as the insert rounds it (half away from zero; it is never negative).
 */
function copyText(entries: readonly LedgerEntry[], currency: string): string {
  const lineEnd = `${copyValue(currency)}\n`;
  let text = '';
  for (const entry of entries) {
    for (const [, field] of FIELDS) text += `${copyValue(field === 'latencyMs' ? Math.round(entry.latencyMs) : entry[field])}\t`;
    text += lineEnd;
  }
  return text;
}

function copyValue(value: string | number | boolean | null | undefined): string {
  // With nothing to escape, `replace` hands back the same string.
  if (typeof value === 'string') return value.replace(COPY_SPECIAL, (char) => COPY_ESCAPES[char]!);
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return '\\N';
}

/** What COPY's text format reads as a separator or an escape, inside a value. */
const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
