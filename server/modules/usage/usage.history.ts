/**
 * An account's recent requests, read from the append-only ledger: newest first, keyset-paginated on
 * (created_at, id) so the `(payer_id, created_at)` index serves every page and rows settled while a
 * member pages never shift what comes next. One request (`findUsageRecord`) is found by the id its client
 * saw: svc's own request id, or the `x-svc-request-id` the client sent.
 *
 * Each row names the key that made it (name, prefix, last 4): the keys of a page are read in one query by
 * id, never joined per row, so the ledger scan stays the one the index serves.
 */
import type { ModelClass } from '../../config/config.ts';
import { isUuid } from '../../db/ids.ts';
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
  /** What was reserved before it ran (its worst case): the cost never exceeds it. */
  reserved: Money;
  /** The pools were exhausted and prepaid credit paid it, at list price. */
  paidFromCredit: boolean;
  status: LedgerStatus;
  latencyMs: number;
  /** api, cli, web or enterprise. */
  channel: string;
  /** api_key, session_token, web_session or enterprise_key. */
  credentialKind: string;
  /** The key or session row the request authenticated with. */
  credentialId: string;
  /** The API key that made the request (personal or organisation), or null for a session. */
  key: UsageKey | null;
  /** Whose credential made it, and whose pools paid (an organisation for its keys). */
  accountId: string;
  payerKind: 'account' | 'organisation';
  payerId: string;
  /** Label of the deployment that served it (never a URL), once one was asked. */
  deployment: string | null;
  upstreamStatus: number | null;
  /** A failed request: the envelope's `code` and `stage` its client was told. */
  errorCode: string | null;
  errorStage: string | null;
  /** The address an organisation key connected from; null for every other credential. */
  clientIp: string | null;
}

/** A key as a usage row names it: never the secret, only what lists show. */
export interface UsageKey {
  id: string;
  kind: 'personal' | 'enterprise';
  name: string;
  prefix: string;
  last4: string;
  revoked: boolean;
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
  reserved_micros: string | number;
  paid_from_credit: boolean | null;
  currency: string;
  status: LedgerStatus;
  latency_ms: number;
  channel: string;
  credential_kind: string;
  credential_id: string;
  account_id: string;
  payer_kind: 'account' | 'organisation';
  payer_id: string;
  deployment: string | null;
  upstream_status: number | null;
  error_code: string | null;
  error_stage: string | null;
  client_ip: string | null;
}

interface KeyRow {
  id: string;
  kind: 'personal' | 'enterprise';
  name: string;
  prefix: string;
  last4: string;
  revoked: boolean;
}

const SELECT = `select id, (extract(epoch from created_at) * 1000000)::bigint as created_us, request_id, client_request_id, product, unit, unit_quantity,
  created_at, model, routed_model, class, stream,
  input_tokens, output_tokens, estimated, cost_micros, reserved_micros, paid_from_credit, currency, status, latency_ms, channel, credential_kind,
  credential_id, account_id, payer_kind, payer_id, deployment, upstream_status, error_code, error_stage, client_ip
  from usage_ledger`;

/** Rows by the id a client saw: the unique request id, or the client's own (a partial index). Exported for the plan test. */
export const REQUEST_BY_ID_SQL = `${SELECT} where request_id = ? or client_request_id = ? order by created_at desc, id desc limit ?`;

/** The shape of an id a client may see as `x-request-id`: svc's own, or a well-formed one the client sent. */
export const requestIdPattern = /^mbr_[A-Za-z0-9_-]{8,64}$/;

/** A payer's ledger rows, newest first. */
export async function listUsageHistory(db: Database, payerId: string, args: HistoryPageArgs): Promise<UsageHistoryPage> {
  const first = args.first ?? HISTORY_DEFAULT_PAGE;
  if (!Number.isInteger(first) || first < 1 || first > HISTORY_MAX_PAGE) {
    throw new AppError('invalid_request', bilingual('first must be an integer from 1 to {max}.', 'first 必须是 1 到 {max} 之间的整数。', { max: HISTORY_MAX_PAGE }), { param: 'first' });
  }
  const cursor = args.after ? decodeCursor(args.after) : null;
  // Named statements: planned once per connection (see Database.rows), one for each shape.
  const rows = cursor
    ? await db.rows<Row>(
        `${SELECT} where payer_id = $1 and (created_at, id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::bigint) order by created_at desc, id desc limit $4`,
        [payerId, cursor.createdUs, cursor.id, first + 1],
        'svc_usage_history_after',
      )
    : await db.rows<Row>(`${SELECT} where payer_id = $1 order by created_at desc, id desc limit $2`, [payerId, first + 1], 'svc_usage_history');
  const page = rows.slice(0, first);
  const last = page.at(-1);
  return {
    nodes: await withKeys(db, page),
    pageInfo: { hasNextPage: rows.length > first, endCursor: last ? encodeCursor(String(last.created_us), String(last.id)) : null },
  };
}

/**
 * The request its client knows by `requestId` (svc's id, else the client's own `x-svc-request-id`, the
 * newest if it sent one twice), paid by `payerId` — or by anyone when `payerId` is null (staff). Null when
 * there is none, or it is someone else's: the two look the same.
 */
export async function findUsageRecord(db: Database, requestId: string, payerId: string | null): Promise<UsageRecord | null> {
  checkRequestId(requestId);
  const params: unknown[] = [requestId, requestId];
  let where = '(request_id = ? or client_request_id = ?)';
  if (payerId !== null) {
    if (!isUuid(payerId)) return null;
    where += ' and payer_id = ?';
    params.push(payerId);
  }
  params.push(requestId);
  const rows = await db.orm.em.getConnection().execute<Row[]>(`${SELECT} where ${where} order by (request_id = ?) desc, created_at desc, id desc limit 1`, params, 'all');
  return (await withKeys(db, rows))[0] ?? null;
}

/** Requests whose id the client saw is `requestId`: one, or several when a client reused its own id (staff search). */
export async function usageRecordsWithId(db: Database, requestId: string, limit: number): Promise<UsageRecord[]> {
  if (!requestIdPattern.test(requestId)) return [];
  const rows = await db.orm.em.getConnection().execute<Row[]>(REQUEST_BY_ID_SQL, [requestId, requestId, limit], 'all');
  return withKeys(db, rows);
}

function checkRequestId(requestId: string): void {
  if (!requestIdPattern.test(requestId)) {
    throw new AppError('invalid_request', bilingual('requestId is the id a reply carried in x-request-id: mbr_ followed by 8 to 64 letters, digits, _ or -.', 'requestId 是响应头 x-request-id 中的 ID：mbr_ 后跟 8 到 64 个字母、数字、_ 或 -。'), {
      param: 'requestId',
    });
  }
}

/** The rows as records, each with the key that made it (one query for all of them). */
async function withKeys(db: Database, rows: Row[]): Promise<UsageRecord[]> {
  const ids = [...new Set(rows.filter((row) => keyKinds.has(row.credential_kind) && isUuid(row.credential_id)).map((row) => row.credential_id))];
  const keys = new Map<string, UsageKey>();
  if (ids.length > 0) {
    const found = await db.orm.em
      .getConnection()
      .execute<KeyRow[]>(`select id, kind, name, prefix, last4, revoked_at is not null as revoked from api_key where id = any(?::uuid[])`, [`{${ids.join(',')}}`], 'all');
    for (const key of found) keys.set(key.id, { id: key.id, kind: key.kind, name: key.name, prefix: key.prefix, last4: key.last4, revoked: key.revoked });
  }
  return rows.map((row) => toRecord(row, keys.get(row.credential_id) ?? null));
}

const keyKinds = new Set(['api_key', 'enterprise_key']);

function toRecord(row: Row, key: UsageKey | null): UsageRecord {
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
    reserved: money(Number(row.reserved_micros), row.currency.trim()),
    paidFromCredit: row.paid_from_credit === true,
    status: row.status,
    latencyMs: row.latency_ms,
    channel: row.channel,
    credentialKind: row.credential_kind,
    credentialId: row.credential_id,
    key,
    accountId: row.account_id,
    payerKind: row.payer_kind,
    payerId: row.payer_id,
    deployment: row.deployment,
    upstreamStatus: row.upstream_status,
    errorCode: row.error_code,
    errorStage: row.error_stage,
    clientIp: row.client_ip,
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
