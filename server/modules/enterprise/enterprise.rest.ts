/**
 * Enterprise REST (DESIGN §8.1), cookie session with the Origin check as every cookie route: the same
 * enterprise service methods as GraphQL, so both answer alike. An organisation the caller does not belong
 * to is a 404 whatever its id.
 *
 *   POST|GET /api/membership/enterprise/applications        submit / your applications
 *   POST     …/applications/{id}/withdraw
 *   GET      /api/membership/enterprise/organisations        yours, with your role
 *   GET      …/organisations/{orgId}                          one, with its members
 *   GET|POST …/organisations/{orgId}/keys                     list / mint (token shown once)
 *   PATCH    …/organisations/{orgId}/keys/{keyId}               name and limits (issue 51)
 *   DELETE   …/organisations/{orgId}/keys/{keyId}
 *   GET      …/organisations/{orgId}/connections[?keyId=]     connecting IPs
 *   GET      …/organisations/{orgId}/usage                    pools as on /account/usage
 */
import { keyLimitsFromBody } from '../api-key/key-limits.ts';
import type { FastifyInstance } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { objectBody } from '../../http/body.ts';
import { route } from '../../http/route-access.ts';
import type { UsageReport } from '../usage/usage.service.ts';

type Org = { Params: { orgId: string } };

export async function enterpriseRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  const base = '/api/membership/enterprise';

  app.post(`${base}/applications`, route({ auth: 'signed-in', cache: 'no-store' }), async (request, reply) => {
    const body = objectBody(request);
    const application = await services.enterpriseApplications.submit(request.principal, body);
    return reply.code(201).send({ ok: true, application });
  });

  app.get(`${base}/applications`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    return { ok: true, applications: await services.enterpriseApplications.mine(request.principal) };
  });

  app.get<{ Params: { id: string } }>(`${base}/applications/:id`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const application = await services.enterpriseApplications.get(request.principal, request.params.id);
    if (!application) throw new AppError('not_found', bilingual('No application {id}.', '没有申请 {id}。', { id: request.params.id.slice(0, 64) }), { param: 'id' });
    const timeline = await services.enterpriseApplications.timeline(request.principal, application);
    return { ok: true, application: { ...application, timeline } };
  });

  app.post<{ Params: { id: string } }>(`${base}/applications/:id/withdraw`, route({ auth: 'signed-in' }), async (request) => {
    return { ok: true, application: await services.enterpriseApplications.withdraw(request.principal, request.params.id) };
  });

  app.get(`${base}/organisations`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    return { ok: true, organisations: await services.organisations.list(request.principal) };
  });

  app.get<Org>(`${base}/organisations/:orgId`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const { orgId } = request.params;
    const [members, invitations] = await Promise.all([services.organisationMembers.list(request.principal, orgId), services.organisationMembers.invitations(request.principal, orgId)]);
    const organisation = await services.organisations.get(request.principal, orgId);
    return { ok: true, organisation: { ...organisation, members, invitations } };
  });

  app.get<Org>(`${base}/organisations/:orgId/keys`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    return { ok: true, keys: await services.organisationKeys.list(request.principal, request.params.orgId) };
  });

  app.post<Org>(`${base}/organisations/:orgId/keys`, route({ auth: 'signed-in', cache: 'no-store' }), async (request, reply) => {
    const body = objectBody(request);
    const cidrs = body.allowedCidrs;
    const { key, token } = await services.organisationKeys.create(request.principal, request.params.orgId, {
      name: body.name,
      allowedCidrs: cidrs === undefined || cidrs === null ? [] : Array.isArray(cidrs) ? cidrs : [cidrs],
      ...keyLimitsFromBody(body),
    });
    // The token is in this response only: never cache it.
    return reply.code(201).send({ ok: true, token, ...key });
  });

  app.patch<{ Params: { orgId: string; keyId: string } }>(`${base}/organisations/:orgId/keys/:keyId`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const body = objectBody(request);
    const { orgId, keyId } = request.params;
    return { ok: true, key: await services.organisationKeys.update(request.principal, orgId, keyId, { name: body.name, ...keyLimitsFromBody(body) }) };
  });

  app.delete<{ Params: { orgId: string; keyId: string } }>(`${base}/organisations/:orgId/keys/:keyId`, route({ auth: 'signed-in' }), async (request) => {
    return { ok: true, key: await services.organisationKeys.revoke(request.principal, request.params.keyId, request.params.orgId) };
  });

  app.get<Org & { Querystring: { keyId?: string } }>(`${base}/organisations/:orgId/connections`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    return { ok: true, connections: await services.connectingIps.list(request.principal, request.params.orgId, { keyId: request.query.keyId ?? null }) };
  });

  app.get<Org>(`${base}/organisations/:orgId/usage`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const report = await services.organisations.usage(request.principal, request.params.orgId);
    return { ok: true, ...serialize(report) };
  });
}

function serialize(report: UsageReport) {
  return { ...report, pools: report.pools.map((pool) => ({ ...pool, resetsAt: pool.resetsAt.toISOString() })) };
}
