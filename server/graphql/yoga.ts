/**
 * `/graphql`: graphql-yoga over HTTP and graphql-ws (subprotocol graphql-transport-ws) over WebSocket on
 * the same path. Both build the same `GraphQLContext`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createYoga } from 'graphql-yoga';
import type { Context } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { newRequestId } from '../http/request-id.ts';
import { closeWithin } from '../infra/shutdown.ts';
import type { Principal } from '../modules/identity/principal.ts';
import { authenticateGraphQLRequest, readCookie, sameOriginUpgrade, sessionCookieName, webSessionControl, type WebSessionControl } from '../http/web-session.ts';
import type { GraphQLContext } from './context.ts';
import { maskError, useErrorCodes } from './errors.ts';
import { AppError, bilingual } from '../errors/app-error.ts';
import { requestLocale } from '../i18n/locale.ts';
import { schema } from './schema.ts';

interface ServerContext {
  req: FastifyRequest;
  reply: FastifyReply;
}

export async function graphqlRoutes(app: FastifyInstance): Promise<void> {
  const services = app.services;
  const yoga = createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    graphiql: { subscriptionsProtocol: 'WS' },
    maskedErrors: { maskError: (error) => maskError(error) },
    plugins: [useErrorCodes],
    context: ({ req }): GraphQLContext => {
      const auth = httpAuth.get(req);
      return { requestId: req.id, services, principal: auth?.principal ?? null, client: auth?.web.client ?? {}, web: auth?.web ?? null };
    },
  });

  app.route({
    url: '/graphql',
    method: ['GET', 'POST', 'OPTIONS'],
    handler: async (req, reply) => {
      // Bearer first (a bad one is a 401 envelope); else the cookie, on POST only and with the Origin check.
      const { principal } = await authenticateGraphQLRequest(req, services);
      httpAuth.set(req, { principal, web: webSessionControl(req, reply, services) });
      const response = await yoga.handleNodeRequestAndResponse(req, reply, { req, reply });
      // Yoga rejects some requests at the HTTP level without a GraphQL body: answer those with the envelope.
      if (response.status >= 400 && response.body === null) throw httpRejection(response.status);
      response.headers.forEach((value, key) => reply.header(key, value));
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });

  const wsServer = new WebSocketServer({ noServer: true });
  /**
   * graphql-ws authentication: `connection_init` payload `{ authorization: "Bearer …" }`, or the web session
   * cookie of the upgrade request when its Origin is ours. Bad credentials close with 4403 (returning
   * false); the credential is checked again on every subscribe, so a revoked one stops working.
   */
  const wsPrincipal = async (ctx: WsContext): Promise<Principal | null | false> => {
    const params = ctx.connectionParams ?? {};
    const authorization = typeof params.authorization === 'string' ? params.authorization : typeof params.Authorization === 'string' ? params.Authorization : undefined;
    try {
      if (authorization !== undefined) return await services.identity.authenticateBearer(authorization);
    } catch {
      return false;
    }
    const request = ctx.extra.request;
    const cookie = readCookie(request.headers.cookie, sessionCookieName);
    if (!cookie || !sameOriginUpgrade(request, services.config)) return null;
    return (await services.identity.authenticateWebSession(cookie)) ?? false;
  };
  app.server.on('upgrade', (request, socket, head) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/graphql') {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    wsServer.handleUpgrade(request, socket, head, (ws) => wsServer.emit('connection', ws, request));
  });

  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args),
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args),
      onConnect: async (ctx) => (await wsPrincipal(ctx)) !== false,
      onSubscribe: async (ctx, _id, payload) => {
        const principal = await wsPrincipal(ctx);
        if (principal === false) {
          ctx.extra.socket.close(4403, 'Forbidden');
          return [];
        }
        const enveloped = yoga.getEnveloped({ ...ctx, req: ctx.extra.request, socket: ctx.extra.socket, params: payload });
        const contextValue: GraphQLContext = {
          requestId: newRequestId(),
          services,
          principal,
          client: {
            ip: ctx.extra.request.socket.remoteAddress ?? null,
            userAgent: ctx.extra.request.headers['user-agent'] ?? null,
            locale: requestLocale(ctx.extra.request.headers),
          },
          web: null,
        };
        const document = enveloped.parse(payload.query);
        const args = {
          schema: enveloped.schema,
          operationName: payload.operationName,
          document,
          variableValues: payload.variables,
          contextValue: Object.assign(await enveloped.contextFactory(), contextValue),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
        const errors = enveloped.validate(args.schema, args.document);
        if (errors.length) return errors;
        return args;
      },
    },
    wsServer,
  );

  app.addHook('onClose', async () => {
    await closeWithin(app.log, 'graphql-ws', async () => {
      await disposable.dispose();
      for (const client of wsServer.clients) client.terminate();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    });
  });
}

/** The HTTP request's resolved credential, handed from the route to yoga's context factory. */
const httpAuth = new WeakMap<FastifyRequest, { principal: Principal | null; web: WebSessionControl }>();

type WsContext = Context<Record<string, unknown> | undefined, Extra>;

interface EnvelopedRoot {
  execute: (args: unknown) => never;
  subscribe: (args: unknown) => never;
}

function httpRejection(status: number): AppError {
  switch (status) {
    case 405:
      return new AppError('method_not_allowed', bilingual('GraphQL accepts GET for queries and POST for every operation.', 'GraphQL 的查询可以用 GET，所有操作都可以用 POST。'));
    case 415:
      return new AppError('unsupported_media_type', bilingual('GraphQL requests need Content-Type: application/json.', 'GraphQL 请求需要设置 Content-Type: application/json。'));
    default:
      return new AppError('invalid_request', bilingual('The GraphQL request was rejected (HTTP {status}).', 'GraphQL 请求被拒绝（HTTP {status}）。', { status }));
  }
}
