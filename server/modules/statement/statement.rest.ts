/**
 * The organisation's monthly statement over REST, beside the organisation's other routes:
 * `GET /api/membership/enterprise/organisations/{orgId}/statements/{YYYY-MM}` → `{ok, statement}` — the
 * same `services.statements` method as GraphQL `organisationStatement`.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../http/route-access.ts';

export async function statementRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  app.get<{ Params: { orgId: string; month: string } }>(
    '/api/membership/enterprise/organisations/:orgId/statements/:month',
    route({ auth: 'signed-in', cache: 'no-store' }),
    async (request) => ({ ok: true, statement: await services.statements.organisation(request.principal, request.params.orgId, request.params.month) }),
  );
}
