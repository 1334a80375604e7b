import type { FastifyInstance } from 'fastify';
import { authenticateRequest, signedIn } from '../../http/web-session.ts';
import type { UsageHistoryPage } from './usage.history.ts';
import type { UsageReport } from './usage.service.ts';

/** `GET /api/membership/usage`: used / limit / remaining / resetsAt per class × window (same as GraphQL `usage`). */
export async function usageRoutes(app: FastifyInstance): Promise<void> {
  app.get('/api/membership/usage', async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, app.services));
    const report = await app.services.usage.report(principal.payer);
    reply.header('cache-control', 'no-store');
    return { ok: true, ...serialize(report) };
  });

  /** `GET /api/membership/usage/history?first=20&after=…`: recent requests, newest first (same as GraphQL `usageHistory`). */
  app.get<{ Querystring: { first?: string; after?: string } }>('/api/membership/usage/history', async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, app.services));
    const { first, after } = request.query;
    const page = await app.services.usage.history(principal.payer, { first: first === undefined ? null : Number(first), after: after ?? null });
    reply.header('cache-control', 'no-store');
    return { ok: true, ...serializePage(page) };
  });
}

function serializePage(page: UsageHistoryPage) {
  return { ...page, nodes: page.nodes.map((node) => ({ ...node, createdAt: node.createdAt.toISOString() })) };
}

function serialize(report: UsageReport) {
  return { ...report, pools: report.pools.map((pool) => ({ ...pool, resetsAt: pool.resetsAt.toISOString() })) };
}
