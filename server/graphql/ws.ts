/**
 * `/graphql` over WebSocket: graphql-ws (subprotocol graphql-transport-ws) on the HTTP server's upgrade
 * requests, running the same yoga envelope as HTTP and building the same `GraphQLContext`.
 *
 * - Authentication: `connection_init` payload `{ authorization: "Bearer …" }`, or the web session cookie of
 *   the upgrade request when its Origin is ours. Bad credentials close with 4403; the credential is checked
 *   again on every subscribe and whenever credentials are invalidated anywhere (sign-out, a revoked key, a
 *   disabled account), so a socket whose credential stopped counting is closed.
 * - Limits: sockets per client address (`server.maxWebSocketsPerIp`), live subscriptions per account
 *   (`server.maxSubscriptionsPerAccount`).
 * - Shutdown: open sockets are told the server is going away (1001) as soon as the drain starts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ExecutionArgs } from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Context, SubscribeMessage } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { AppError } from '../errors/app-error.ts';
import { refuseSocket } from '../http/guards.ts';
import { newRequestId } from '../infra/request-id.ts';
import { readCookie, sameOriginUpgrade, sessionCookieName } from '../http/web-session.ts';
import { requestLocale } from '../i18n/locale.ts';
import { closeWithin } from '../infra/shutdown.ts';
import type { Principal } from '../authz/principal.ts';
import type { Services } from '../services.ts';
import type { GraphQLContext } from '../graphql-core/context.ts';
import { asInvalidRequest, errorsWithRequestId, isGraphQLError, maskError, resultWithRequestId } from './errors.ts';
import { SharedStreams, shareEvents, sharingKey } from './shared-events.ts';

/** What yoga's handler is given per HTTP request (yoga.ts). */
export interface ServerContext {
  req: FastifyRequest;
  reply: FastifyReply;
}

export type Yoga = YogaServerInstance<ServerContext, GraphQLContext>;

type WsContext = Context<Record<string, unknown> | undefined, Extra>;

interface EnvelopedRoot {
  execute: (args: unknown) => never;
  subscribe: (args: unknown) => never;
}

/** Serves graphql-ws on `/graphql` upgrades of `app`'s server; other upgrade paths get a 404 envelope. */
export function graphqlWebSockets(app: FastifyInstance, yoga: Yoga, services: Services): void {
  const wsServer = new WebSocketServer({ noServer: true });
  const { maxWebSocketsPerIp, maxSubscriptionsPerAccount } = services.config.server;
  limitSocketsPerIp(app, wsServer, maxWebSocketsPerIp);
  const principalOf = socketPrincipal(services);
  const counts = new SubscriptionCounts();
  const signedIn = recheckOnInvalidate(services, principalOf);
  const streams = new SharedStreams();

  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args),
      subscribe: (args) => (args.rootValue as EnvelopedRoot).subscribe(args),
      onConnect: async (ctx) => {
        const principal = await principalOf(ctx);
        if (principal) signedIn.sockets.add(ctx);
        return principal !== false;
      },
      onClose: (ctx) => {
        signedIn.sockets.delete(ctx);
        counts.closed(ctx);
      },
      onComplete: (ctx, id) => counts.ended(ctx, id),
      onSubscribe: async (ctx, id, payload) => {
        const principal = await principalOf(ctx);
        if (principal === false) {
          ctx.extra.socket.close(4403, 'Forbidden');
          return [];
        }
        // Each operation on the socket is a request of its own, with its own id.
        const requestId = newRequestId();
        if (principal && counts.of(principal.accountId) >= maxSubscriptionsPerAccount) {
          return errorsWithRequestId([maskError(new AppError('rate_limited', `Too many live subscriptions for this account (at most ${maxSubscriptionsPerAccount}); complete some first.`))], requestId);
        }
        const prepared = await prepareOperation(yoga, services, ctx, payload, { id, requestId, principal, streams });
        if (Array.isArray(prepared)) return prepared;
        if (principal) counts.started(ctx, id, principal.accountId);
        return prepared;
      },
      // Shared subscriptions never get here: their stream writes their frames (shared-events.ts).
      onNext: (_ctx, _id, _payload, args, result) => resultWithRequestId(result, (args.contextValue as GraphQLContext).requestId),
    },
    wsServer,
  );

  app.addHook('preClose', (done) => {
    for (const client of wsServer.clients) client.close(1001, 'server shutting down');
    done();
  });
  app.addHook('onClose', async () => {
    signedIn.stop();
    await closeWithin(app.log, 'graphql-ws', async () => {
      await disposable.dispose();
      for (const client of wsServer.clients) client.terminate();
      await new Promise<void>((resolve) => wsServer.close(() => resolve()));
    });
  });
}

/**
 * The socket's principal: from the `connection_init` payload's bearer credential, else from the upgrade
 * request's session cookie when its Origin is ours; null when signed out, false when a credential was
 * given and does not count (the socket is then closed with 4403).
 */
function socketPrincipal(services: Services): (ctx: WsContext) => Promise<Principal | null | false> {
  return async (ctx) => {
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
}

/** WebSockets per client address: each holds a socket and subscriptions for as long as it likes. */
function limitSocketsPerIp(app: FastifyInstance, wsServer: WebSocketServer, maxPerIp: number): void {
  const socketsPerIp = new Map<string, number>();
  app.server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/graphql') return refuseSocket(socket, 404, 'not_found', `No WebSocket endpoint at ${path}; GraphQL subscriptions are at /graphql.`);
    const ip = socket.remoteAddress ?? 'unknown';
    const open = socketsPerIp.get(ip) ?? 0;
    if (open >= maxPerIp) return refuseSocket(socket, 503, 'service_unavailable', `Too many WebSockets from your address (at most ${maxPerIp}); close some and retry.`, 'retry-after: 1\r\n');
    socketsPerIp.set(ip, open + 1);
    socket.once('close', () => {
      const left = (socketsPerIp.get(ip) ?? 1) - 1;
      if (left <= 0) socketsPerIp.delete(ip);
      else socketsPerIp.set(ip, left);
    });
    wsServer.handleUpgrade(request, socket, head, (ws) => wsServer.emit('connection', ws, request));
  });
}

/** Live subscriptions per account, across its sockets on this instance. */
class SubscriptionCounts {
  readonly #perAccount = new Map<string, number>();
  readonly #bySocket = new WeakMap<WsContext, Map<string, string>>();

  of(accountId: string): number {
    return this.#perAccount.get(accountId) ?? 0;
  }

  started(ctx: WsContext, id: string, accountId: string): void {
    this.#perAccount.set(accountId, this.of(accountId) + 1);
    let mine = this.#bySocket.get(ctx);
    if (!mine) this.#bySocket.set(ctx, (mine = new Map()));
    mine.set(id, accountId);
  }

  ended(ctx: WsContext, id: string): void {
    const accountId = this.#bySocket.get(ctx)?.get(id);
    if (!accountId) return;
    this.#bySocket.get(ctx)!.delete(id);
    const left = this.of(accountId) - 1;
    if (left <= 0) this.#perAccount.delete(accountId);
    else this.#perAccount.set(accountId, left);
  }

  closed(ctx: WsContext): void {
    for (const id of [...(this.#bySocket.get(ctx)?.keys() ?? [])]) this.ended(ctx, id);
  }
}

/**
 * Signed-in sockets check their credential again whenever credentials are invalidated anywhere: one that no
 * longer counts is closed with 4403, ending its subscriptions, instead of living on until the next
 * subscribe. Most checks are cache hits.
 */
function recheckOnInvalidate(services: Services, principalOf: (ctx: WsContext) => Promise<Principal | null | false>): { sockets: Set<WsContext>; stop: () => void } {
  const sockets = new Set<WsContext>();
  const recheck = (ctx: WsContext) =>
    principalOf(ctx).then(
      (principal) => principal === false && ctx.extra.socket.close(4403, 'Forbidden'),
      () => ctx.extra.socket.close(4403, 'Forbidden'),
    );
  const stop = services.identity.onInvalidate(() => {
    for (const ctx of sockets) void recheck(ctx);
  });
  return { sockets, stop };
}

/** One operation's execution arguments through yoga's envelope, or the errors that answer it at once. */
async function prepareOperation(
  yoga: Yoga,
  services: Services,
  ctx: WsContext,
  payload: SubscribeMessage['payload'],
  operation: { id: string; requestId: string; principal: Principal | null; streams: SharedStreams },
): Promise<ExecutionArgs | ReturnType<typeof errorsWithRequestId>> {
  const { id, requestId, principal, streams } = operation;
  const request = ctx.extra.request;
  const enveloped = yoga.getEnveloped({ ...ctx, req: request, principal, socket: ctx.extra.socket, params: payload });
  const contextValue: GraphQLContext = {
    requestId,
    services,
    principal,
    signedOutReason: null,
    client: { ip: request.socket.remoteAddress ?? null, userAgent: request.headers['user-agent'] ?? null, locale: requestLocale(request.headers) },
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
  const key = sharingKey(args.schema, document, payload, principal, contextValue.client.locale);
  if (key !== null) shareEvents(args.contextValue, { streams, key, socket: ctx.extra.socket, id, requestId });
  return args;
}
