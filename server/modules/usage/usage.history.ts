/**
 * An account's recent requests, read from the append-only ledger: newest first, keyset-paginated on
 * (created_at, id) so the `(account_id, created_at)` index serves every page and rows settled while a
 * member pages never shift what comes next.
 */
import type { ModelClass } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { money, type Money } from '../../config/money.ts';
import type { LedgerStatus, MeterUnit, Product } from '../../metering/turn.ts';

export interface UsageRecord {
  /** The turn id svc generated (the `x-request-id` the client saw, unless it sent its own). */
  requestId: string;
  /** The `x-svc-request-id` the client sent, if any. */
  clientRequestId: string | null;
  product: Product;
  /** What the product produced besides tokens (images, audio seconds, searches), or null for chat. */
  unit: MeterUnit | null;
  unitQuantity: number | null;
  createdAt: Date;
  /** The product model the client asked for and was billed as (`auto`). */
  model: string;
  /** The product model it resolved to, which the reply named as `model` (`svc-2.1-fast`). */
  routedModel: string;
  class: ModelClass;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  /** Counted with a tokenizer because the upstream reported no usage. */
  estimated: boolean;
  cost: Money;
  status: LedgerStatus;
  latencyMs: number;
  /** api, cli, web or enterprise. */
  channel: string;
  /** api_key, session_token, web_session or enterprise_key. */
  credentialKind: string;
}

export interface UsageHistoryPage {
  nodes: UsageRecord[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

export interface HistoryPageArgs {
  first?: number | null;
  after?: string | null;
}

export const HISTORY_DEFAULT_PAGE = 20;
export const HISTORY_MAX_PAGE = 100;

interface Row {
  id: string | number;
  created_us: string | number;
  request_id: string;
  client_request_id: string | null;
  product: Product;
  unit: MeterUnit | null;
  unit_quantity: string | number | null;
  created_at: Date | string;
  model: string;
  routed_model: string;
  class: ModelClass;
  stream: boolean;
  input_tokens: number;
  output_tokens: number;
  estimated: boolean;
  cost_micros: string | number;
  currency: string;
  status: LedgerStatus;
  latency_ms: number;
  channel: string;
  credential_kind: string;
}

const SELECT = `select id, (extract(epoch from created_at) * 1000000)::bigint as created_us, request_id, client_request_id, product, unit, unit_quantity,
  created_at, model, routed_model, class, stream,
  input_tokens, output_tokens, estimated, cost_micros, currency, status, latency_ms, channel, credential_kind
  from usage_ledger`;

/** A payer's ledger rows, newest first. */
export async function listUsageHistory(db: Database, payerId: string, args: HistoryPageArgs): Promise<UsageHistoryPage> {
  const first = args.first ?? HISTORY_DEFAULT_PAGE;
  if (!Number.isInteger(first) || first < 1 || first > HISTORY_MAX_PAGE) {
    throw new AppError('invalid_request', bilingual('first must be an integer from 1 to {max}.', 'first 必须是 1 到 {max} 之间的整数。', { max: HISTORY_MAX_PAGE }), { param: 'first' });
  }
  const cursor = args.after ? decodeCursor(args.after) : null;
  const params: unknown[] = [payerId];
  let where = 'payer_id = ?';
  if (cursor) {
    where += ` and (created_at, id) < (timestamptz 'epoch' + ? * interval '1 microsecond', ?)`;
    params.push(cursor.createdUs, cursor.id);
  }
  params.push(first + 1);
  const rows = await db.orm.em.getConnection().execute<Row[]>(`${SELECT} where ${where} order by created_at desc, id desc limit ?`, params, 'all');
  const page = rows.slice(0, first);
  const last = page.at(-1);
  return {
    nodes: page.map(toRecord),
    pageInfo: { hasNextPage: rows.length > first, endCursor: last ? encodeCursor(String(last.created_us), String(last.id)) : null },
  };
}

function toRecord(row: Row): UsageRecord {
  return {
    requestId: row.request_id,
    clientRequestId: row.client_request_id,
    product: row.product,
    unit: row.unit,
    unitQuantity: row.unit_quantity === null ? null : Number(row.unit_quantity),
    createdAt: new Date(row.created_at),
    model: row.model,
    routedModel: row.routed_model,
    class: row.class,
    stream: row.stream,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    estimated: row.estimated,
    cost: money(Number(row.cost_micros), row.currency.trim()),
    status: row.status,
    latencyMs: row.latency_ms,
    channel: row.channel,
    credentialKind: row.credential_kind,
  };
}

function encodeCursor(createdUs: string, id: string): string {
  return Buffer.from(`${createdUs}:${id}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdUs: string; id: string } {
  // At most 16 digits of microseconds (year 2286): a longer number is no cursor of ours, and would overflow an interval.
  const match = /^(\d{1,16}):(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw new AppError('invalid_request', bilingual('after is not a cursor this API returned.', 'after 不是本接口返回的游标。'), { param: 'after' });
  return { createdUs: match[1]!, id: match[2]! };
}
