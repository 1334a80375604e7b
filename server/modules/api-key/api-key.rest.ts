/**
 * Personal API keys (spec §4): `GET`/`POST /api/membership/auth/api-keys` and `DELETE …/:id`. The service
 * decides who may (authz `api-key:manage`: the web session cookie; a bearer credential alone gets 401
 * `sign_in_required`).
 */
import type { FastifyInstance } from 'fastify';
import { objectBody, stringField } from '../../http/body.ts';
import { authenticateRequest, signedIn } from '../../http/web-session.ts';

export async function apiKeyRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;

  app.get('/api/membership/auth/api-keys', async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    const keys = await services.apiKeys.list(principal);
    reply.header('cache-control', 'no-store');
    return { ok: true, keys };
  });

  app.post('/api/membership/auth/api-keys', async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    const { key, token } = await services.apiKeys.create(principal, { name: stringField(objectBody(request), 'name') });
    // The token is in this response only: never cache it.
    return reply.code(201).header('cache-control', 'no-store').send({ ok: true, token, ...key });
  });

  app.delete<{ Params: { id: string } }>('/api/membership/auth/api-keys/:id', async (request) => {
    const principal = signedIn(await authenticateRequest(request, services));
    return { ok: true, key: await services.apiKeys.revoke(principal, request.params.id, { requestId: request.id }) };
  });
}
