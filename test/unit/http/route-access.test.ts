/**
 * Route access is declared, not repeated (http/route-access.ts): a route that declares `auth` or `cache`
 * gets the one preHandler that authenticates and sets `cache-control: no-store`; a route that declares
 * nothing gets no hook at all — the metered hot path above all, whose pipeline authenticates itself.
 */
import Fastify, { type RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { enforceRouteAccess, route } from '../../../server/http/route-access.ts';
import { chatCompletionsPath, completionsPath, gatewayRoutes, responsesPath } from '../../../server/modules/gateway/gateway.rest.ts';
import type { Services } from '../../../server/services.ts';

async function routesOf(register: (app: ReturnType<typeof Fastify>) => Promise<void> | void): Promise<Map<string, RouteOptions>> {
  const app = Fastify();
  // Nothing here is called: registering routes only reads which services they will use.
  const services = { pipeline: {}, chatSurface: {}, responsesSurface: {}, completionsSurface: {} } as unknown as Services;
  app.decorate('services', services);
  enforceRouteAccess(app, services);
  const seen = new Map<string, RouteOptions>();
  app.addHook('onRoute', (options) => {
    seen.set(`${[options.method].flat().join(',')} ${options.url}`, options);
  });
  await register(app);
  await app.ready();
  await app.close();
  return seen;
}

describe('declared route access', () => {
  it('the metered routes run no access hook: their pipeline authenticates itself', async () => {
    const routes = await routesOf((app) => app.register(gatewayRoutes));
    for (const path of [chatCompletionsPath, responsesPath, completionsPath]) {
      const options = routes.get(`POST ${path}`);
      expect(options, path).toBeDefined();
      expect(options!.preHandler, path).toBeUndefined();
    }
  });

  it('a declaring route gets exactly one access preHandler, ahead of its own', async () => {
    const own = async () => undefined;
    const routes = await routesOf((app) => {
      app.get('/plain', async () => ({ ok: true }));
      app.get('/mine', route({ auth: 'signed-in', cache: 'no-store' }), async () => ({ ok: true }));
      app.post('/out', { ...route({ auth: 'optional' }), preHandler: own }, async () => ({ ok: true }));
    });
    expect(routes.get('GET /plain')!.preHandler).toBeUndefined();
    expect([routes.get('GET /mine')!.preHandler].flat()).toHaveLength(1);
    const out = [routes.get('POST /out')!.preHandler].flat();
    expect(out).toHaveLength(2);
    expect(out[1]).toBe(own);
  });

  it('reading request.principal on a route that declared no auth is a bug, and says so', async () => {
    const app = Fastify();
    enforceRouteAccess(app, {} as Services);
    app.get('/undeclared', async (request) => ({ id: request.principal.accountId }));
    const response = await app.inject({ method: 'GET', url: '/undeclared' });
    expect(response.statusCode).toBe(500);
    expect(response.json().message).toMatch(/request\.principal read on GET \/undeclared/);
    await app.close();
  });
});
