/**
 * `buildApp(config)`: one Fastify server with every surface — `/v1/*`, `/api/membership/*`, `/graphql`
 * (HTTP and WebSocket), the SPA, `/healthz`, `/readyz`, `/metrics`. Tests boot it exactly like `main.ts`.
 */
import { RequestContext } from '@mikro-orm/core';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config/config.ts';
import { openDatabase, type Database } from './db/orm.ts';
import { entities } from './modules/entities.ts';
import { graphqlRoutes } from './graphql/yoga.ts';
import { parseJsonBody } from './http/body.ts';
import { corsFor, corsRoutes, type Cors } from './http/cors.ts';
import { installErrorHandling, sendError, toAppError } from './http/envelope.ts';
import { createHttpMetrics, installMetrics, type HttpMetrics } from './http/metrics.ts';
import { chatLaneServer } from './http/chat-lane.ts';
import { requestIdFrom } from './infra/request-id.ts';
import { OneLinePerRequest } from './http/request-log.ts';
import { enforceRouteAccess } from './http/route-access.ts';
import { trackRoutes } from './http/route-table.ts';
import { spaRoutes, webIndex } from './http/spa.ts';
import { openRedis, type RedisLayer } from './infra/redis.ts';
import { boundDrain } from './infra/shutdown.ts';
import { clientErrorEnvelope, guardConnections, limitEveryRoute } from './http/guards.ts';
import proxyAddr from '@fastify/proxy-addr';
import { createLogger, infoLineWriter } from './log.ts';
import { accountRoutes } from './modules/account/account.rest.ts';
import { localAdminRoutes } from './modules/account/local-admin.rest.ts';
import { apiKeyRoutes } from './modules/api-key/api-key.rest.ts';
import { deviceAuthRoutes } from './modules/device-auth/device-auth.rest.ts';
import { oauthRoutes } from './modules/oauth/oauth.rest.ts';
import { mediaRoutes } from './modules/media/media.rest.ts';
import { speechRoutes } from './modules/media/speech.rest.ts';
import { embeddingRoutes } from './modules/embedding/embedding.rest.ts';
import { imageRoutes } from './modules/media/image.rest.ts';
import { modelRoutes } from './modules/model/model.rest.ts';
import { discoverUpstream } from './modules/model/upstream-discovery.ts';
import { planRoutes } from './modules/plan/plan.rest.ts';
import { chatCompletionsPath, chatHandler, gatewayRoutes, isMeteredPath, messagesHandler, messagesPath, responsesHandler, responsesPath } from './modules/gateway/gateway.rest.ts';
import { usageRoutes } from './modules/usage/usage.rest.ts';
import { quoteRoutes } from './modules/quote/quote.rest.ts';
import { alertRoutes } from './modules/alerts/alerts.rest.ts';
import { searchRoutes } from './modules/search/search.rest.ts';
import { sessionRoutes } from './modules/session/session.rest.ts';
import { staffRoutes } from './modules/staff/staff.rest.ts';
import { mcpRoutes, toolsCallHandler } from './modules/mcp/mcp.rest.ts';
import { mcpPath, mcpToolsCallPath } from './modules/mcp/mcp.tools.ts';
import { billingRoutes } from './modules/billing/billing.rest.ts';
import { creditRoutes } from './modules/credit/credit.rest.ts';
import { statementRoutes } from './modules/statement/statement.rest.ts';
import { exportRoutes } from './modules/export/export.rest.ts';
import { enterpriseRoutes } from './modules/enterprise/enterprise.rest.ts';
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

export async function buildApp(fileConfig: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const log = options.logger ?? createLogger(fileConfig);
  // Nothing configured to answer chat: a model server already running on this machine is used (and logged).
  const config = await discoverUpstream(fileConfig, log);
  const { db, redis } = await openStores(config, log);
  const services = createServices(config, db, redis, log);
  const cors = corsFor(config);
  const metrics = createHttpMetrics();
  const trusted = proxyAddr.compile(config.server.trustedProxies);
  const isTrustedProxy = (address: string) => trusted(address, 0);
  const app = createServer(config, services, { log, cors, metrics, isTrustedProxy });

  app.decorate('services', services);
  boundDrain(app, log, options.drainMs ?? 30_000);
  // Runs after the plugins' own onClose hooks (Fastify closes in reverse order of registration).
  app.addHook('onClose', () => services.close());
  services.start();

  const allowedMethods = trackRoutes(app);
  // A browser that opens an unknown page gets the web app (its not-found page), not the JSON envelope.
  const index = webIndex(config);
  installErrorHandling(app, allowedMethods, () => index);
  // Routes declare the credential they need and whether their answer may be cached (http/route-access.ts).
  enforceRouteAccess(app, services);
  // Only JSON bodies: anything else is a 415 (routes that need forms register their own parser).
  app.removeContentTypeParser(['text/plain', 'application/json']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, parseJsonBody);
  scopeEachRequest(app, db, cors);

  installMetrics(app, metrics, { settings: config.metrics, isTrustedProxy });
  limitEveryRoute(app, services.rateLimits, config.rateLimits.ipPerMinute);
  healthRoutes(app, db, redis);
  await registerRoutes(app, config, cors);
  return app;
}

/** PostgreSQL (or PGlite) and Redis (or in-process), the database closed again if Redis cannot be opened. */
async function openStores(config: Config, log: Logger): Promise<{ db: Database; redis: RedisLayer }> {
  const db = await openDatabase(config, log, entities);
  const redis = await openRedis(config, log).catch(async (error: unknown) => {
    await db.close();
    throw error;
  });
  return { db, redis };
}

/**
 * The Fastify instance on the chat lane's server: the chat path's plain requests skip Fastify
 * (http/chat-lane.ts), Fastify answers the rest on the same server. Connection caps and Node's own
 * refusals answer in the envelope.
 */
function createServer(config: Config, services: Services, http: { log: Logger; cors: Cors | null; metrics: HttpMetrics; isTrustedProxy(address: string): boolean }): FastifyInstance {
  const log = http.log as FastifyBaseLogger;
  const writeLine = infoLineWriter(http.log);
  // `gateway.httpLayer: fastify` leaves the chat path to Fastify's routes too, with the same server timeouts.
  const timeouts = { requestTimeout: 30_000, keepAliveTimeout: 72_000 };
  const chatLane = {
    path: chatCompletionsPath,
    handler: chatHandler(services.pipeline, services.chatSurface),
    routes: [
      { path: messagesPath, handler: messagesHandler(services.pipeline, services.messagesSurface), errorShape: 'anthropic' as const, query: true },
      { path: responsesPath, handler: responsesHandler(services.pipeline, services.responsesSurface), errorShape: 'svc' as const, query: false },
      { path: mcpToolsCallPath, handler: toolsCallHandler(config, services.pipeline, services.mcpTools), errorShape: 'svc' as const, query: false },
    ],
    bodyLimit: config.server.bodyLimitBytes,
    cors: http.cors,
    trustedProxies: config.server.trustedProxies,
    log,
    writeLine,
    metrics: http.metrics,
  };
  const app = Fastify({
    loggerInstance: log,
    ...(config.gateway.httpLayer === 'lane' ? { serverFactory: (handler: Parameters<typeof chatLaneServer>[0]) => chatLaneServer(handler, chatLane, timeouts) } : timeouts),
    genReqId: (request) => requestIdFrom(request.headers['x-svc-request-id']),
    logController: new OneLinePerRequest(writeLine),
    bodyLimit: config.server.bodyLimitBytes,
    trustProxy: config.server.trustedProxies.length > 0 ? config.server.trustedProxies : false,
    routerOptions: { ignoreTrailingSlash: true },
    // What Node itself refuses before any route (malformed request, header overflow, timeout) gets the envelope.
    clientErrorHandler: clientErrorEnvelope,
    // The spec also names the prefix /api/membership/v1 (§7, §9): it answers as /api/membership does.
    rewriteUrl: (request) => unversionedMembershipUrl(request.url ?? '/'),
    // Bad URLs and over-long path parameters get the envelope too, not Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-svc-request-id', request.id).header('x-request-id', request.id);
      return sendError(request, reply, toAppError(error));
    },
  });
  app.server.headersTimeout = config.server.headersTimeoutMs;
  guardConnections(app, { maxConnections: config.server.maxConnections, maxConnectionsPerIp: config.server.maxConnectionsPerIp, isTrustedProxy: http.isTrustedProxy });
  return app;
}

/** Every request: the request id headers, CORS on `/v1`, and one ORM unit of work — except on the metered hot path. */
function scopeEachRequest(app: FastifyInstance, db: Database, cors: Cors | null): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-svc-request-id', request.id).header('x-request-id', request.id);
    const url = request.url;
    if (url.startsWith('/v1/')) {
      const origin = request.headers.origin;
      if (cors !== null && origin !== undefined) cors.apply(reply.raw, origin);
      // The metered hot path uses no ORM unit of work (DESIGN §2): plain SQL, Redis and undici only. MCP is
      // metered search and its discovery, on the same footing.
      if (isMeteredPath(url) || url.startsWith(mcpPath) || request.method === 'OPTIONS') return done();
    }
    // One ORM unit of work per request (STYLE §7).
    RequestContext.create(db.orm.em, done);
  });
}

function healthRoutes(app: FastifyInstance, db: Database, redis: RedisLayer): void {
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
}

/** Every surface's routes: the REST modules, `/graphql`, and the web app last (its catch-all pages). */
async function registerRoutes(app: FastifyInstance, config: Config, cors: Cors | null): Promise<void> {
  await app.register(planRoutes);
  await app.register(accountRoutes);
  // Embedded database: `svc admin create-user` cannot open it while this server runs, so it asks the server.
  if (!config.database.url) await app.register(localAdminRoutes);
  await app.register(sessionRoutes);
  await app.register(apiKeyRoutes);
  await app.register(deviceAuthRoutes);
  await app.register(oauthRoutes);
  await app.register(modelRoutes);
  await app.register(gatewayRoutes);
  corsRoutes(app, cors);
  await app.register(usageRoutes);
  await app.register(quoteRoutes);
  await app.register(alertRoutes);
  await app.register(searchRoutes);
  await app.register(mediaRoutes);
  await app.register(speechRoutes);
  await app.register(imageRoutes);
  await app.register(embeddingRoutes);
  await app.register(staffRoutes);
  await app.register(mcpRoutes);
  await app.register(billingRoutes);
  await app.register(creditRoutes);
  await app.register(exportRoutes);
  await app.register(enterpriseRoutes);
  await app.register(statementRoutes);
  await app.register(graphqlRoutes);
  await app.register(spaRoutes);
}

/** `/api/membership/v1/…` → `/api/membership/…`; every other URL as it is (one prefix check per request). */
export function unversionedMembershipUrl(url: string): string {
  if (!url.startsWith('/api/membership/v1')) return url;
  const rest = url.slice('/api/membership/v1'.length);
  if (rest === '') return '/api/membership';
  return rest[0] === '/' || rest[0] === '?' ? `/api/membership${rest}` : url;
}
