/**
 * Staff lookups and actions over REST (DESIGN §8.2), for the admin app's compatibility layer and scripts:
 * the same service methods as the GraphQL queries and mutations. Cookie session with the Origin check, as
 * every cookie route; the services refuse members (403 `forbidden`) and bearer credentials (401: staff act
 * only from a web session).
 */
import type { FastifyInstance } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { objectBody } from '../../http/body.ts';
import { route } from '../../http/route-access.ts';
import type { AccountRole } from '../../authz/principal.ts';
import { serializeRecord } from '../usage/usage.rest.ts';
import type { SearchHit } from './staff-search.service.ts';
import { statsRanges, type StatsRange } from './stats.service.ts';

type WithId = { Params: { id: string } };

export async function staffRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  const base = '/api/membership/staff';

  app.get<{ Querystring: Record<string, string | undefined> }>(`${base}/accounts`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const { search, first, after } = request.query;
    const page = await services.staff.searchAccounts(request.principal, { search, first: first === undefined ? null : Number(first), after: after ?? null });
    return { ok: true, accounts: page.nodes, nextCursor: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null };
  });

  /** One account with its pools, live keys and sessions (the ledger is on GraphQL `account(id).usageHistory`). */
  app.get<WithId>(`${base}/accounts/:id`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const account = await services.staff.findAccount(request.principal, request.params.id);
    if (!account) throw new AppError('not_found', bilingual('No account {id}.', '没有账户 {id}。', { id: request.params.id }), { param: 'id' });
    const [usage, apiKeys, sessions] = await Promise.all([
      services.staff.accountUsage(request.principal, account),
      services.staff.accountKeys(request.principal, account.id),
      services.staff.accountSessions(request.principal, account.id),
    ]);
    return { ok: true, account: { ...account, usage, apiKeys, sessions } };
  });

  /** The search box: accounts, organisations, keys, requests and orders by what was typed (same as GraphQL `staffSearch`). */
  app.get<{ Querystring: { query?: string } }>(`${base}/search`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const result = await services.staffSearch.search(request.principal, request.query.query ?? '');
    return { ok: true, query: result.query, shape: result.shape, truncated: result.truncated, hits: result.hits.map(serializeHit) };
  });

  /** Any account's request by its mbr_ id (same as GraphQL `request`). */
  app.get<WithId>(`${base}/requests/:id`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const record = await services.staff.request(request.principal, request.params.id);
    if (!record) throw new AppError('not_found', bilingual('No request {id}.', '没有请求 {id}。', { id: request.params.id }), { param: 'id' });
    return { ok: true, request: serializeRecord(record) };
  });

  app.get<{ Querystring: { range?: string } }>(`${base}/stats`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const range = request.query.range ?? 'last_30_days';
    if (!Object.hasOwn(statsRanges, range)) {
      throw new AppError('invalid_request', bilingual('range must be one of {ranges}.', 'range 必须是 {ranges} 之一。', { ranges: Object.keys(statsRanges).join(', ') }), { param: 'range' });
    }
    const [stats, reviewQueue] = await Promise.all([services.stats.stats(request.principal, range as StatsRange), services.stats.reviewQueue(request.principal)]);
    return { ok: true, stats: { ...stats, reviewQueue } };
  });

  app.post<WithId>(`${base}/accounts/:id/disable`, route({ auth: 'signed-in' }), async (request) => {
    const body = objectBody(request);
    return { ok: true, account: await services.staff.disableAccount(request.principal, request.params.id, { reason: text(body.reason), requestId: request.id }) };
  });

  app.post<WithId>(`${base}/accounts/:id/enable`, route({ auth: 'signed-in' }), async (request) => {
    const body = objectBody(request);
    return { ok: true, account: await services.staff.enableAccount(request.principal, request.params.id, { reason: optionalText(body.reason, 'reason'), requestId: request.id }) };
  });

  app.post<WithId>(`${base}/accounts/:id/sessions/end`, route({ auth: 'signed-in' }), async (request) => {
    const body = objectBody(request);
    return { ok: true, endedSessions: await services.staff.endSessions(request.principal, request.params.id, { reason: text(body.reason), requestId: request.id }) };
  });

  app.post<WithId>(`${base}/accounts/:id/role`, route({ auth: 'signed-in' }), async (request) => {
    const body = objectBody(request);
    if (typeof body.role !== 'string') throw new AppError('invalid_request', bilingual('role is required: member, support or admin.', '请填写 role：member、support 或 admin。'), { param: 'role' });
    const account = await services.staff.setAccountRole(request.principal, request.params.id, body.role as AccountRole, {
      reason: optionalText(body.reason, 'reason'),
      requestId: request.id,
    });
    return { ok: true, account };
  });

  app.post<WithId>(`${base}/accounts/:id/package`, route({ auth: 'signed-in' }), async (request) => {
    const body = objectBody(request);
    if (typeof body.packageId !== 'string' || body.packageId.length === 0) throw new AppError('invalid_request', bilingual('packageId is required.', 'packageId 为必填项。'), { param: 'packageId' });
    const account = await services.staff.setAccountPackage(request.principal, request.params.id, body.packageId, {
      reason: text(body.reason),
      until: time(body.until, 'until'),
      requestId: request.id,
    });
    return { ok: true, account };
  });

  app.post<WithId>(`${base}/api-keys/:id/revoke`, route({ auth: 'signed-in' }), async (request) => {
    const body = objectBody(request);
    return { ok: true, key: await services.apiKeys.revoke(request.principal, request.params.id, { reason: optionalText(body.reason, 'reason'), requestId: request.id }) };
  });

  app.get<{ Querystring: Record<string, string | undefined> }>(`${base}/audit-log`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const { actorId, actorEmail, aboutAccountId, targetType, targetId, action, first, after } = request.query;
    const page = await services.audit.list(
      request.principal,
      { actorId, actorEmail, aboutAccountId, targetType, targetId, action },
      { first: first === undefined ? null : Number(first), after: after ?? null },
    );
    return { ok: true, entries: page.nodes, nextCursor: page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null };
  });
}

function serializeHit(hit: SearchHit) {
  return { ...hit, request: hit.request ? serializeRecord(hit.request) : null };
}

/** A string the service checks itself (a required reason): anything else becomes "" so the service names the field. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function optionalText(value: unknown, param: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new AppError('invalid_request', bilingual('{param} must be a string.', '{param} 必须是字符串。', { param }), { param });
  return value;
}

/** An ISO 8601 time, or null when absent. */
function time(value: unknown, param: string): Date | null {
  if (value === undefined || value === null) return null;
  const date = typeof value === 'string' ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) throw new AppError('invalid_request', bilingual('{param} must be an ISO 8601 time, e.g. 2027-01-31T00:00:00Z, or null.', '{param} 必须是 ISO 8601 时间（例如 2027-01-31T00:00:00Z）或 null。', { param }), { param });
  return date;
}
