/** Sessions of the signed-in member (web sessions and device-login tokens): list and revoke (authz `session:manage`). */
import type { FastifyInstance } from 'fastify';
import { route } from '../../http/route-access.ts';

export async function sessionRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;

  app.get('/api/membership/auth/sessions', route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    return { ok: true, sessions: await services.sessions.list(request.principal) };
  });

  app.delete<{ Params: { id: string } }>('/api/membership/auth/sessions/:id', route({ auth: 'signed-in' }), async (request) => {
    return { ok: true, session: await services.sessions.revoke(request.principal, request.params.id) };
  });
}
