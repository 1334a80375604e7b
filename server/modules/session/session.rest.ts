/** Sessions of the signed-in member (web sessions and device-login tokens): list and revoke (authz `session:manage`). */
import type { FastifyInstance } from 'fastify';
import { authenticateRequest, signedIn } from '../../http/web-session.ts';

export async function sessionRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;

  app.get('/api/membership/auth/sessions', async (request) => {
    const principal = signedIn(await authenticateRequest(request, services));
    return { ok: true, sessions: await services.sessions.list(principal) };
  });

  app.delete<{ Params: { id: string } }>('/api/membership/auth/sessions/:id', async (request) => {
    const principal = signedIn(await authenticateRequest(request, services));
    return { ok: true, session: await services.sessions.revoke(principal, request.params.id) };
  });
}
