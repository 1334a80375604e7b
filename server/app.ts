/**
 * `buildApp(config)`: one Fastify server with every surface — `/v1/*`, `/api/membership/*`, `/graphql`
 * (HTTP and WebSocket), the SPA, `/healthz`, `/readyz`, `/metrics`. Tests boot it exactly like `main.ts`.
 */
import { RequestContext } from '@mikro-orm/core';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config/config.ts';
import { openDatabase } from './db/orm.ts';
import { graphqlRoutes } from './graphql/yoga.ts';
import { installErrorHandling, sendError, toAppError } from './http/envelope.ts';
import { installMetrics } from './http/metrics.ts';
import { requestIdFrom } from './http/request-id.ts';
import { OneLinePerRequest } from './http/request-log.ts';
import { trackRoutes } from './http/route-table.ts';
import { spaRoutes } from './http/spa.ts';
import { openRedis } from './infra/redis.ts';
import { boundDrain } from './infra/shutdown.ts';
import { createLogger, fixedFieldLogger } from './log.ts';
import { accountRoutes } from './modules/account/account.rest.ts';
import { apiKeyRoutes } from './modules/api-key/api-key.rest.ts';
import { deviceAuthRoutes } from './modules/device-auth/device-auth.rest.ts';
import { mediaRoutes } from './modules/media/media.rest.ts';
import { speechRoutes } from './modules/media/speech.rest.ts';
import { modelRoutes } from './modules/model/model.rest.ts';
import { planRoutes } from './modules/plan/plan.rest.ts';
import { chatCompletionsPath, gatewayRoutes } from './modules/gateway/gateway.rest.ts';
import { usageRoutes } from './modules/usage/usage.rest.ts';
import { searchRoutes } from './modules/search/search.rest.ts';
import { sessionRoutes } from './modules/session/session.rest.ts';
import { staffRoutes } from './modules/staff/staff.rest.ts';
import { createServices, type Services } from './services.ts';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

export interface BuildOptions {
  logger?: Logger;
  /** How long `close()` lets requests in flight finish before cutting their connections (default 30 s). */
  drainMs?: number;
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const log = options.logger ?? createLogger(config);
  const db = await openDatabase(config, log);
  const redis = await openRedis(config, log).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  const services = createServices(config, db, redis, log);
  // Built here until the composition root takes it (services.ts is being reworked on main).

  const app = Fastify({
    loggerInstance: log as FastifyBaseLogger,
    genReqId: (request) => requestIdFrom(request.headers['x-svc-request-id']),
    logController: new OneLinePerRequest(fixedFieldLogger(log)),
    bodyLimit: config.server.bodyLimitBytes,
    requestTimeout: 30_000,
    keepAliveTimeout: 72_000,
    trustProxy: config.server.trustedProxies.length > 0 ? config.server.trustedProxies : false,
    routerOptions: { ignoreTrailingSlash: true },
    // Bad URLs and over-long path parameters get the envelope too, not Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-svc-request-id', request.id).header('x-request-id', request.id);
      return sendError(request, reply, toAppError(error));
    },
  });
  app.decorate('services', services);
  boundDrain(app, log, options.drainMs ?? 30_000);
  // Runs after the plugins' own onClose hooks (Fastify closes in reverse order of registration).
  app.addHook('onClose', () => services.close());
  services.start();

  const allowedMethods = trackRoutes(app);
  installErrorHandling(app, allowedMethods);
  // Only JSON bodies: anything else is a 415 (routes that need forms register their own parser).
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-svc-request-id', request.id).header('x-request-id', request.id);
    // The chat hot path uses no ORM unit of work (DESIGN §2): plain SQL, Redis and undici only.
    if (request.url.startsWith(chatCompletionsPath)) return done();
    // One ORM unit of work per request (STYLE §7).
    RequestContext.create(db.orm.em, done);
  });

  installMetrics(app);
  app.get('/healthz', async () => ({ ok: true }));
  app.get('/readyz', async (_request, reply) => {
    const [database, cache] = await Promise.allSettled([db.ping(), redis.ping()]);
    const checks = {
      database: database.status === 'fulfilled' ? 'ok' : `unreachable: ${(database.reason as Error).message}`,
      redis: redis.mode === 'in-process' ? 'in-process' : cache.status === 'fulfilled' ? 'ok' : `unreachable: ${(cache.reason as Error).message}`,
    };
    const ok = database.status === 'fulfilled' && cache.status === 'fulfilled';
    return reply.code(ok ? 200 : 503).send({ ok, checks });
  });

  await app.register(planRoutes);
  await app.register(accountRoutes);
  await app.register(sessionRoutes);
  await app.register(apiKeyRoutes);
  await app.register(deviceAuthRoutes);
  await app.register(modelRoutes);
  await app.register(gatewayRoutes);
  await app.register(usageRoutes);
  await app.register(searchRoutes);
  await app.register(mediaRoutes);
  await app.register(speechRoutes);
  await app.register(staffRoutes);
  await app.register(graphqlRoutes);
  await app.register(spaRoutes);
  return app;
}
