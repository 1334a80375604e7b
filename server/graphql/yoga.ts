/**
 * `/graphql`: graphql-yoga over HTTP here, and graphql-ws (subprotocol graphql-transport-ws) over WebSocket
 * on the same path (ws.ts). Both build the same `GraphQLContext`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createYoga, type Plugin } from 'graphql-yoga';
import { graphqlCors } from '../http/cors.ts';
import type { Principal } from '../authz/principal.ts';
import { authenticateGraphQLRequest, webSessionControl, type RequestAuth, type WebSessionControl } from '../http/web-session.ts';
import type { Services } from '../services.ts';
import type { GraphQLContext } from '../graphql-core/context.ts';
import { maskError, resultWithRequestId, useErrorCodes } from './errors.ts';
import { AppError, bilingual } from '../errors/app-error.ts';
import { useDocumentLimits } from './limits.ts';
import { useSharedEvents } from './shared-events.ts';
import { schema } from './schema.ts';
import { graphqlWebSockets, type ServerContext, type Yoga } from './ws.ts';

export async function graphqlRoutes(app: FastifyInstance): Promise<void> {
  const yoga = createGraphQLServer(app.services);
  graphqlHttpRoute(app, yoga, app.services);
  graphqlWebSockets(app, yoga, app.services);
}

/** The yoga server both transports run: schema, masked errors with codes, document limits, CORS. */
function createGraphQLServer(services: Services): Yoga {
  return createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: '/graphql',
    logging: false,
    landingPage: false,
    cors: graphqlCors(services.config),
    graphiql: { subscriptionsProtocol: 'WS' },
    maskedErrors: { maskError: (error) => maskError(error) },
    plugins: [
      useErrorCodes,
      useRequestIdOnErrors,
      useSharedEvents,
      ...useDocumentLimits({
        production: services.config.server.production,
        suggestions: services.config.graphql.suggestions,
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
}

/** `GET|POST /graphql`: the credential first, then yoga; what yoga refuses without a GraphQL body gets the envelope. */
function graphqlHttpRoute(app: FastifyInstance, yoga: Yoga, services: Services): void {
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
      // The CORS answer depends on Origin: a shared cache must not hand one origin's answer to another.
      reply.header('vary', varyOnOrigin(response.headers.get('vary')));
      reply.status(response.status);
      reply.send(response.body);
      return reply;
    },
  });
}

/** Every error of an HTTP response names the request (parse and validation errors included). */
const useRequestIdOnErrors: Plugin<Record<string, unknown>, ServerContext> = {
  onResultProcess: ({ result, setResult, serverContext }) => setResult(resultWithRequestId(result, serverContext.req.id)),
};

/** The HTTP request's resolved credential, handed from the route to yoga's context factory. */
const httpAuth = new WeakMap<FastifyRequest, RequestAuth & { web: WebSessionControl }>();

function varyOnOrigin(vary: string | null): string {
  return vary && /(^|,)\s*origin\s*(,|$)/i.test(vary) ? vary : vary ? `${vary}, Origin` : 'Origin';
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
