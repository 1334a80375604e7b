/**
 * Enterprise REST (DESIGN §8.1), cookie session with the Origin check as every cookie route: the same
 * `EnterpriseService` methods as GraphQL, so both answer alike. An organisation the caller does not belong
 * to is a 404 whatever its id.
 *
 *   POST|GET /api/membership/enterprise/applications        submit / your applications
 *   POST     …/applications/{id}/withdraw
 *   GET      /api/membership/enterprise/organisations        yours, with your role
 *   GET      …/organisations/{orgId}                          one, with its members
 *   GET|POST …/organisations/{orgId}/keys                     list / mint (token shown once)
 *   DELETE   …/organisations/{orgId}/keys/{keyId}
 *   GET      …/organisations/{orgId}/connections[?keyId=]     connecting IPs
 *   GET      …/organisations/{orgId}/usage                    pools as on /account/usage
 */
import type { FastifyInstance } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { objectBody } from '../../http/body.ts';
import { authenticateRequest, signedIn } from '../../http/web-session.ts';
import type { UsageReport } from '../usage/usage.service.ts';

type Org = { Params: { orgId: string } };

export async function enterpriseRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  const base = '/api/membership/enterprise';

  app.post(`${base}/applications`, async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    const body = objectBody(request);
    const application = await services.enterprise.submit(principal, body);
    return reply.code(201).header('cache-control', 'no-store').send({ ok: true, application });
  });

  app.get(`${base}/applications`, async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    reply.header('cache-control', 'no-store');
    return { ok: true, applications: await services.enterprise.myApplications(principal) };
  });

  app.get<{ Params: { id: string } }>(`${base}/applications/:id`, async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    const application = await services.enterprise.getApplication(principal, request.params.id);
    if (!application) throw new AppError('not_found', bilingual('No application {id}.', '没有申请 {id}。', { id: request.params.id.slice(0, 64) }), { param: 'id' });
    const timeline = await services.enterprise.timeline(principal, application);
    reply.header('cache-control', 'no-store');
    return { ok: true, application: { ...application, timeline } };
  });

  app.post<{ Params: { id: string } }>(`${base}/applications/:id/withdraw`, async (request) => {
    const principal = signedIn(await authenticateRequest(request, services));
    return { ok: true, application: await services.enterprise.withdraw(principal, request.params.id) };
  });

  app.get(`${base}/organisations`, async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    reply.header('cache-control', 'no-store');
    return { ok: true, organisations: await services.enterprise.organisations(principal) };
  });

  app.get<Org>(`${base}/organisations/:orgId`, async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    const { orgId } = request.params;
    const [members, invitations] = await Promise.all([services.enterprise.members(principal, orgId), services.enterprise.invitations(principal, orgId)]);
    const organisation = await services.enterprise.organisation(principal, orgId);
    reply.header('cache-control', 'no-store');
    return { ok: true, organisation: { ...organisation, members, invitations } };
  });

  app.get<Org>(`${base}/organisations/:orgId/keys`, async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    reply.header('cache-control', 'no-store');
    return { ok: true, keys: await services.enterprise.keys(principal, request.params.orgId) };
  });

  app.post<Org>(`${base}/organisations/:orgId/keys`, async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    const body = objectBody(request);
    const cidrs = body.allowedCidrs;
    const { key, token } = await services.enterprise.createKey(principal, request.params.orgId, {
      name: body.name,
      allowedCidrs: cidrs === undefined || cidrs === null ? [] : Array.isArray(cidrs) ? cidrs : [cidrs],
    });
    // The token is in this response only: never cache it.
    return reply.code(201).header('cache-control', 'no-store').send({ ok: true, token, ...key });
  });

  app.delete<{ Params: { orgId: string; keyId: string } }>(`${base}/organisations/:orgId/keys/:keyId`, async (request) => {
    const principal = signedIn(await authenticateRequest(request, services));
    return { ok: true, key: await services.enterprise.revokeKey(principal, request.params.keyId, request.params.orgId) };
  });

  app.get<Org & { Querystring: { keyId?: string } }>(`${base}/organisations/:orgId/connections`, async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    reply.header('cache-control', 'no-store');
    return { ok: true, connections: await services.enterprise.connections(principal, request.params.orgId, { keyId: request.query.keyId ?? null }) };
  });

  app.get<Org>(`${base}/organisations/:orgId/usage`, async (request, reply) => {
    const principal = signedIn(await authenticateRequest(request, services));
    const report = await services.enterprise.usage(principal, request.params.orgId);
    reply.header('cache-control', 'no-store');
    return { ok: true, ...serialize(report) };
  });
}

function serialize(report: UsageReport) {
  return { ...report, pools: report.pools.map((pool) => ({ ...pool, resetsAt: pool.resetsAt.toISOString() })) };
}
