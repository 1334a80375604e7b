import type { FastifyInstance } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { route } from '../../http/route-access.ts';
import type { UsageHistoryPage, UsageRecord } from './usage.history.ts';
import type { UsageReport } from './usage.service.ts';

/** `GET /api/membership/usage`: used / limit / remaining / resetsAt per class × window (same as GraphQL `usage`). */
export async function usageRoutes(app: FastifyInstance): Promise<void> {
  app.get('/api/membership/usage', route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const report = await app.services.usage.report(request.principal.payer);
    return { ok: true, ...serialize(report) };
  });

  /** `GET /api/membership/usage/history?first=20&after=…`: recent requests, newest first (same as GraphQL `usageHistory`). */
  app.get<{ Querystring: { first?: string; after?: string } }>('/api/membership/usage/history', route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const { first, after } = request.query;
    const page = await app.services.usage.history(request.principal.payer, { first: first === undefined ? null : Number(first), after: after ?? null });
    return { ok: true, ...serializePage(page) };
  });

  /** `GET /api/membership/usage/requests/{id}`: one of your requests by its mbr_ id (same as GraphQL `myRequest`); 404 for anyone else's. */
  app.get<{ Params: { id: string } }>('/api/membership/usage/requests/:id', route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const record = await app.services.usage.request(request.principal.payer, request.params.id);
    if (!record) throw new AppError('not_found', bilingual('You have no request {id}.', '您没有请求 {id}。', { id: request.params.id }), { param: 'id' });
    return { ok: true, request: { ...serializeRecord(record), pricing: app.services.usage.pricing(record) } };
  });
}

/**
 * A ledger record as JSON, as GraphQL's `UsageRecord` shows it: times as ISO strings, the duration in
 * seconds beside the milliseconds; the credential's row id stays inside (the key is named by `key`).
 */
export function serializeRecord(record: UsageRecord) {
  const { credentialId: _credentialId, ...shown } = record;
  return { ...shown, createdAt: record.createdAt.toISOString(), durationSeconds: record.latencyMs / 1000, refunded: record.status === 'refunded' };
}

function serializePage(page: UsageHistoryPage) {
  return { ...page, nodes: page.nodes.map(serializeRecord) };
}

function serialize(report: UsageReport) {
  return { ...report, pools: report.pools.map((pool) => ({ ...pool, resetsAt: pool.resetsAt.toISOString() })) };
}
