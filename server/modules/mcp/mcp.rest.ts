/**
 * MCP over HTTP (DESIGN §8.4), for a bearer API key or session token like the rest of `/v1`, or an MCP
 * client's OAuth access token (accepted here and nowhere else):
 *
 * - `POST /v1/mcp`: the Streamable HTTP endpoint (official SDK, stateless, JSON responses).
 * - `GET /v1/mcp`: the discovery document (JSON); asking only for `text/event-stream` gets 405, since
 *   a stateless server has no server-initiated stream (the SDK client accepts 405). `DELETE` is 405 too.
 * - `POST /v1/mcp/tools/call {name, arguments}` → `{ok, name, result}`: the same tools without MCP.
 * - `/.well-known/oauth-protected-resource/v1/mcp` (RFC 9728), which every 401 here names in `WWW-Authenticate`
 *   with the scope to ask for, so an MCP client can discover svc's authorization server and sign in by
 *   OAuth; `/.well-known/oauth-protected-resource` describes the server as a whole.
 *
 * A browser page on a foreign origin may not drive the MCP endpoint (MCP's DNS-rebinding rule): a request
 * carrying `Origin` must come from `server.baseUrl`, `server.webUrl` or the configured `gateway.cors.origins`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/config.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { objectBody } from '../../http/body.ts';
import type { Principal } from '../../authz/principal.ts';
import type { HttpReply, HttpRequest } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import { answerToolCall, connectMcp, createMcpServer, createMcpTransport, plainToolCall } from './mcp.server.ts';
import { mcpPath, mcpServerName, mcpToolsCallPath, type McpTools } from './mcp.tools.ts';
import { mcpScope } from '../oauth/oauth-client.ts';

export const protectedResourcePath = '/.well-known/oauth-protected-resource';

/** Rethrows `error`; a 401 of this resource tells the client where its metadata is (RFC 9728 §5.1). */
function challenging(config: Config): (error: unknown) => never {
  const challenge = `Bearer resource_metadata="${config.server.baseUrl}${protectedResourcePath}${mcpPath}", scope="${mcpScope}"`;
  return (error) => {
    if (error instanceof AppError && error.status === 401) {
      throw new AppError(error.code, { en: error.message, zh: error.messageZh }, { ...error.options, headers: { ...error.options.headers, 'www-authenticate': challenge } });
    }
    throw error;
  };
}

/**
 * `POST /v1/mcp/tools/call`, for Fastify's route and the chat lane (app.ts), which serves its plain requests
 * ahead of Fastify as it does chat's: a search is a metered turn like a chat turn, on the same hot path.
 */
export function toolsCallHandler(config: Config, pipeline: MeteringPipeline, tools: McpTools): (request: HttpRequest, reply: HttpReply) => Promise<void> {
  const withChallenge = challenging(config);
  const plan = (request: HttpRequest) => {
    const body = objectBody(request);
    return tools.plan(body.name, body.arguments, { kind: 'tool', name: String(body.name) }, 'arguments.');
  };
  return (request, reply) => pipeline.serve(request, reply, () => plan(request), { audience: 'mcp' }).catch(withChallenge);
}

export async function mcpRoutes(app: FastifyInstance): Promise<void> {
  const { config, identity, pipeline, mcpTools: tools, rateLimits } = app.services;
  const base = config.server.baseUrl;
  const ownOrigins = new Set([base, config.server.webUrl, ...config.gateway.cors.origins.filter((origin) => origin !== '*')].map((url) => new URL(url).origin.toLowerCase()));
  const withChallenge = challenging(config);
  const authenticate = (request: FastifyRequest): Promise<Principal> =>
    identity.authenticateBearer(request.headers.authorization, { ip: request.ip, audience: 'mcp' }).catch(withChallenge);
  const checkOrigin = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    // Not the request's own Host: under DNS rebinding a foreign page's Host is its own name too.
    if (origin === undefined || ownOrigins.has(origin.toLowerCase())) return;
    throw new AppError('forbidden', bilingual('Requests from origin {origin} may not use the MCP endpoint.', '来源 {origin} 的请求不得使用 MCP 端点。', { origin: JSON.stringify(origin.slice(0, 200)) }), {
      stage: 'auth',
    });
  };
  const methodNotAllowed = (reply: FastifyReply, message: string) => {
    reply.header('allow', 'GET, POST');
    throw new AppError('method_not_allowed', message);
  };

  const metadata = (resource: string) => ({
    resource,
    resource_name: 'svc hosted tools (MCP)',
    authorization_servers: [base],
    scopes_supported: [mcpScope],
    bearer_methods_supported: ['header'],
    resource_documentation: `${config.server.webUrl}/docs/search`,
  });
  app.get(protectedResourcePath, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').header('access-control-allow-origin', '*').send(metadata(base)));
  app.get(`${protectedResourcePath}${mcpPath}`, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').header('access-control-allow-origin', '*').send(metadata(`${base}${mcpPath}`)),
  );

  app.get(mcpPath, async (request, reply) => {
    checkOrigin(request);
    await authenticate(request);
    const accept = request.headers.accept ?? '';
    if (/text\/event-stream/i.test(accept) && !/application\/json|\*\/\*/i.test(accept)) {
      methodNotAllowed(reply, 'This MCP server is stateless and opens no server-initiated stream: POST JSON-RPC messages to this URL.');
    }
    return reply.header('cache-control', 'no-store').send(tools.discovery());
  });

  app.delete(mcpPath, async (request, reply) => {
    checkOrigin(request);
    await authenticate(request);
    methodNotAllowed(reply, 'This MCP server is stateless: there is no session to end.');
  });

  // The per-IP limit of a tools/call is charged by admission (see http/guards.ts); other messages charge it here.
  app.post(mcpPath, { config: { ipLimit: false } }, async (request, reply) => {
    checkOrigin(request);
    const body = request.body;
    if ((body as { method?: unknown } | null)?.method !== 'tools/call') {
      await rateLimits.assert([{ key: `ip:${request.ip}`, limit: config.rateLimits.ipPerMinute, periodMs: 60_000 }], 'requests from your address');
    }
    const principal = await authenticate(request);
    const clientId = request.headers['x-svc-request-id'];
    const context = { principal, origin: { ip: request.ip, traceId: request.id, clientRequestId: clientId === request.id ? request.id : null } };
    const plain = await plainToolCall(body, request.headers, tools);
    if (plain !== null) {
      rawReply(reply, request.id);
      return answerToolCall(plain, tools, pipeline, context, reply.raw);
    }
    const server = await createMcpServer(tools, pipeline, context);
    const transport = await createMcpTransport();
    rawReply(reply, request.id);
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await connectMcp(server, transport, tools);
      await transport.handleRequest(request.raw, reply.raw, body);
    } catch (error) {
      request.log.error({ err: error }, `${mcpServerName} MCP request failed`);
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json' });
      reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null }));
    }
  });

  app.post(mcpToolsCallPath, { config: { ipLimit: false } }, toolsCallHandler(config, pipeline, tools));
}

/** The MCP answer is written to the raw response (by the SDK, or as it would): the request id headers go there too. */
function rawReply(reply: FastifyReply, id: string): void {
  reply.hijack();
  reply.raw.setHeader('x-svc-request-id', id);
  reply.raw.setHeader('x-request-id', id);
}
