/**
 * The append-only usage ledger (`usage_ledger`): one row per turn, unique on the turn id, so settling
 * twice writes one row. Rows are written in batches; the batch travels as one JSON parameter bound by the
 * driver (nothing to escape).
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

const COLUMNS = `request_id varchar, client_request_id varchar, account_id uuid, payer_kind varchar, payer_id uuid, credential_kind varchar,
  credential_id varchar, channel varchar, product varchar, model varchar, routed_model varchar, deployment varchar, class varchar, stream boolean,
  input_tokens integer, output_tokens integer, unit varchar, unit_quantity numeric, estimated boolean, cost_micros bigint, reserved_micros bigint,
  currency char(3), status varchar, upstream_status integer, latency_ms integer, lease_id varchar`;
const NAMES = COLUMNS.split(',').map((column) => column.trim().split(' ')[0]).join(', ');
const INSERT_SQL = `insert into usage_ledger (${NAMES}) select ${NAMES} from json_to_recordset($1::json) as x(${COLUMNS}) on conflict (request_id) do nothing`;

/** Channel of a credential kind: where a request came from. */
export const channels: Record<string, string> = { web_session: 'web', session_token: 'cli', api_key: 'api', enterprise_key: 'enterprise' };

export async function insertLedgerRows(db: Database, currency: string, entries: readonly LedgerEntry[]): Promise<void> {
  const rows = entries.map((e) => ({
    request_id: e.requestId,
    client_request_id: e.clientRequestId,
    account_id: e.accountId,
    payer_kind: e.payerKind,
    payer_id: e.payerId,
    credential_kind: e.credentialKind,
    credential_id: e.credentialId,
    channel: e.channel,
    product: e.product,
    model: e.model,
    routed_model: e.routedModel,
    deployment: e.deployment,
    class: e.class,
    stream: e.stream,
    input_tokens: e.inputTokens,
    output_tokens: e.outputTokens,
    unit: e.unit,
    unit_quantity: e.unitQuantity,
    estimated: e.estimated,
    cost_micros: e.costMicros,
    reserved_micros: e.reservedMicros,
    currency,
    status: e.status,
    upstream_status: e.upstreamStatus,
    latency_ms: Math.round(e.latencyMs),
    lease_id: e.leaseId ?? null,
  }));
  await db.query(INSERT_SQL, [JSON.stringify(rows)], 'svc_ledger_insert');
}
