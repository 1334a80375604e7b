/**
 * Personal API keys (spec §4): `GET`/`POST /api/membership/auth/api-keys`, `PATCH …/:id` (name and limits:
 * `budgetDay`, `budgetMonth`, `requestsPerMinute`, `models`, `expiresAt`) and `DELETE …/:id`. The service
 * decides who may (authz `api-key:manage`: the web session cookie; a bearer credential alone gets 401
 * `sign_in_required`).
 */
import type { FastifyInstance } from 'fastify';
import { objectBody, stringField } from '../../http/body.ts';
import { route } from '../../http/route-access.ts';
import { keyLimitsFromBody } from './key-limits.ts';

export async function apiKeyRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;

  app.get('/api/membership/auth/api-keys', route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const keys = await services.apiKeys.list(request.principal);
    return { ok: true, keys };
  });

  app.post('/api/membership/auth/api-keys', route({ auth: 'signed-in', cache: 'no-store' }), async (request, reply) => {
    const body = objectBody(request);
    const { key, token } = await services.apiKeys.create(request.principal, { name: stringField(body, 'name'), ...keyLimitsFromBody(body) });
    // The token is in this response only: never cache it.
    return reply.code(201).send({ ok: true, token, ...key });
  });

  // A key's name and limits (issue 51): fields absent stay as they are, null lifts a limit.
  app.patch<{ Params: { id: string } }>('/api/membership/auth/api-keys/:id', route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const body = objectBody(request);
    return { ok: true, key: await services.apiKeys.update(request.principal, request.params.id, { name: body.name, ...keyLimitsFromBody(body) }) };
  });

  app.delete<{ Params: { id: string } }>('/api/membership/auth/api-keys/:id', route({ auth: 'signed-in' }), async (request) => {
    return { ok: true, key: await services.apiKeys.revoke(request.principal, request.params.id, { requestId: request.id }) };
  });
}
