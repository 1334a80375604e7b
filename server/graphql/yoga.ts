/**
 * `/graphql`: graphql-yoga over HTTP and graphql-ws (subprotocol graphql-transport-ws) over WebSocket on
 * the same path. Both build the same `GraphQLContext`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createYoga, type Plugin } from 'graphql-yoga';
import type { Context } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { refuseSocket } from '../http/guards.ts';
import { newRequestId } from '../http/request-id.ts';
import { closeWithin } from '../infra/shutdown.ts';
import type { Principal } from '../modules/identity/principal.ts';
import { authenticateGraphQLRequest, readCookie, sameOriginUpgrade, sessionCookieName, webSessionControl, type RequestAuth, type WebSessionControl } from '../http/web-session.ts';
import type { GraphQLContext } from './context.ts';
import { asInvalidRequest, errorsWithRequestId, isGraphQLError, maskError, resultWithRequestId, useErrorCodes } from './errors.ts';
import { AppError, bilingual } from '../errors/app-error.ts';
import { requestLocale } from '../i18n/locale.ts';
import { useDocumentLimits } from './limits.ts';
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
    plugins: [
      useErrorCodes,
      useRequestIdOnErrors,
      ...useDocumentLimits({
        production: services.config.server.production,
        // HTTP: the route resolved the credential before yoga ran; WebSocket: onSubscribe passes it in.
        principalOf: (context) => (context.req ? httpAuth.get(context.req as FastifyRequest)?.principal : undefined) ?? (context.principal as Principal | undefined) ?? null,
      }),
    ],
    context: ({ req }): GraphQLContext => {
      const auth = httpAuth.get(req);
      return {
        requestId: req.id,
        services,
        principal: auth?.principal ?? null,
        signedOutReason: auth?.refusal ?? null,
        client: auth?.web.client ?? {},
        web: auth?.web ?? null,
      };
    },
  });

  app.route({
    url: '/graphql',
    method: ['GET', 'POST', 'OPTIONS'],
    handler: async (req, reply) => {
      // Bearer first (a bad one is a 401 envelope); else the cookie, on POST only and with the Origin check.
      const auth = await authenticateGraphQLRequest(req, services);
      httpAuth.set(req, { ...auth, web: webSessionControl(req, reply, services) });
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
    return (await services.identity.authenticateWebSession(cookie)).principal ?? false;
  };
  // WebSockets per client address: each holds a socket and subscriptions for as long as it likes.
  const socketsPerIp = new Map<string, number>();
  const { maxWebSocketsPerIp, maxSubscriptionsPerAccount } = services.config.server;
  app.server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/graphql') return refuseSocket(socket, 404, 'not_found', `No WebSocket endpoint at ${path}; GraphQL subscriptions are at /graphql.`);
    const ip = socket.remoteAddress ?? 'unknown';
    const open = socketsPerIp.get(ip) ?? 0;
    if (open >= maxWebSocketsPerIp) return refuseSocket(socket, 503, 'service_unavailable', `Too many WebSockets from your address (at most ${maxWebSocketsPerIp}); close some and retry.`, 'retry-after: 1\r\n');
    socketsPerIp.set(ip, open + 1);
    socket.once('close', () => {
      const left = (socketsPerIp.get(ip) ?? 1) - 1;
      if (left <= 0) socketsPerIp.delete(ip);
      else socketsPerIp.set(ip, left);
    });
    wsServer.handleUpgrade(request, socket, head, (ws) => wsServer.emit('connection', ws, request));
  });
  // Live subscriptions per account, across its sockets and this instance.
  const subscriptions = new Map<string, number>();
  const subscriber = new WeakMap<WsContext, Map<string, string>>();
  const ended = (ctx: WsContext, id: string) => {
    const accountId = subscriber.get(ctx)?.get(id);
    if (!accountId) return;
    subscriber.get(ctx)!.delete(id);
    const left = (subscriptions.get(accountId) ?? 1) - 1;
    if (left <= 0) subscriptions.delete(accountId);
    else subscriptions.set(accountId, left);
  };

  /**
   * Signed-in sockets check their credential again whenever credentials are invalidated anywhere (sign-out,
   * a revoked key, a disabled account): one that no longer counts is closed with 4403, ending its
   * subscriptions, instead of living on until the next subscribe. Most checks are cache hits.
   */
  const signedInSockets = new Set<WsContext>();
  const recheck = (ctx: WsContext) =>
    wsPrincipal(ctx).then(
      (principal) => principal === false && ctx.extra.socket.close(4403, 'Forbidden'),
      () => ctx.extra.socket.close(4403, 'Forbidden'),
    );
  const stopRechecks = services.identity.onInvalidate(() => {
    for (const ctx of signedInSockets) void recheck(ctx);
  });

  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args),
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args),
      onConnect: async (ctx) => {
        const principal = await wsPrincipal(ctx);
        if (principal) signedInSockets.add(ctx);
        return principal !== false;
      },
      onClose: (ctx) => {
        signedInSockets.delete(ctx);
        for (const id of [...(subscriber.get(ctx)?.keys() ?? [])]) ended(ctx, id);
      },
      onComplete: (ctx, id) => ended(ctx, id),
      onSubscribe: async (ctx, id, payload) => {
        const principal = await wsPrincipal(ctx);
        if (principal === false) {
          ctx.extra.socket.close(4403, 'Forbidden');
          return [];
        }
        // Each operation on the socket is a request of its own, with its own id.
        const requestId = newRequestId();
        if (principal && (subscriptions.get(principal.accountId) ?? 0) >= maxSubscriptionsPerAccount) {
          return errorsWithRequestId([maskError(new AppError('rate_limited', `Too many live subscriptions for this account (at most ${maxSubscriptionsPerAccount}); complete some first.`))], requestId);
        }
        const enveloped = yoga.getEnveloped({ ...ctx, req: ctx.extra.request, principal, socket: ctx.extra.socket, params: payload });
        const contextValue: GraphQLContext = {
          requestId,
          services,
          principal,
          signedOutReason: null,
          client: {
            ip: ctx.extra.request.socket.remoteAddress ?? null,
            userAgent: ctx.extra.request.headers['user-agent'] ?? null,
            locale: requestLocale(ctx.extra.request.headers),
          },
          web: null,
        };
        let document;
        try {
          document = enveloped.parse(payload.query);
        } catch (error) {
          // A syntax error answers this operation; thrown, it would close the whole socket (4500).
          if (isGraphQLError(error)) return errorsWithRequestId([asInvalidRequest(error)], requestId);
          throw error;
        }
        const args = {
          schema: enveloped.schema,
          operationName: payload.operationName,
          document,
          variableValues: payload.variables,
          contextValue: Object.assign(await enveloped.contextFactory(), contextValue),
          rootValue: { execute: enveloped.execute, subscribe: enveloped.subscribe },
        };
        const errors = enveloped.validate(args.schema, args.document);
        if (errors.length) return errorsWithRequestId(errors, requestId);
        if (principal) {
          subscriptions.set(principal.accountId, (subscriptions.get(principal.accountId) ?? 0) + 1);
          let mine = subscriber.get(ctx);
          if (!mine) subscriber.set(ctx, (mine = new Map()));
          mine.set(id, principal.accountId);
        }
        return args;
      },
      onNext: (_ctx, _id, _payload, args, result) => resultWithRequestId(result, (args.contextValue as GraphQLContext).requestId),
    },
    wsServer,
  );

  // Shutdown: open sockets are told the server is going away (1001) as soon as the drain starts, so a
  // browser on a live page neither keeps the process alive nor waits for a timeout; it reconnects elsewhere.
  app.addHook('preClose', (done) => {
    for (const client of wsServer.clients) client.close(1001, 'server shutting down');
    done();
  });
  app.addHook('onClose', async () => {
    stopRechecks();
    await closeWithin(app.log, 'graphql-ws', async () => {
      await disposable.dispose();
      for (const client of wsServer.clients) client.terminate();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    });
  });
}

/** Every error of an HTTP response names the request (parse and validation errors included). */
const useRequestIdOnErrors: Plugin<Record<string, unknown>, ServerContext> = {
  onResultProcess: ({ result, setResult, serverContext }) => setResult(resultWithRequestId(result, serverContext.req.id)),
};

/** The HTTP request's resolved credential, handed from the route to yoga's context factory. */
const httpAuth = new WeakMap<FastifyRequest, RequestAuth & { web: WebSessionControl }>();

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
