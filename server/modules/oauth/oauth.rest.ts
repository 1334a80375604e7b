/**
 * svc's OAuth authorization server over HTTP: RFC 8414 metadata and the `/oauth/*` endpoints.
 *
 * - `GET /oauth/authorize`: authorization code + PKCE (S256) for MCP clients; redirects to the consent page.
 * - `POST /oauth/token`: `authorization_code`, `refresh_token`, and the RFC 8628 device grant.
 * - `POST /oauth/register`: dynamic client registration (RFC 7591), JSON in and out.
 * - `POST /oauth/revoke`: token revocation (RFC 7009).
 * - `POST /oauth/device_authorization`: RFC 8628 device login (the device-auth module's service).
 *
 * Token and device bodies are `application/x-www-form-urlencoded`. Every error, malformed bodies and limits
 * included, is answered in the RFC 6749 §5.2 shape (`{error, error_description}`, `Cache-Control: no-store`),
 * never the service envelope.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { toAppError } from '../../http/envelope.ts';
import { objectBody } from '../../http/body.ts';
import { clientInfo } from '../../http/web-session.ts';
import { rfcDeviceResponse } from '../device-auth/device-auth.rest.ts';
import { grantTypes, mcpScope } from './oauth-client.ts';

export const deviceCodeGrantType = 'urn:ietf:params:oauth:grant-type:device_code';

export async function oauthRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;

  app.get('/.well-known/oauth-authorization-server', async (_request, reply) => {
    const base = services.config.server.baseUrl;
    return reply.header('cache-control', 'public, max-age=300').header('access-control-allow-origin', '*').send({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      device_authorization_endpoint: `${base}/oauth/device_authorization`,
      grant_types_supported: [...grantTypes, deviceCodeGrantType],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: [mcpScope],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${services.config.server.webUrl}/docs`,
    });
  });

  await app.register(protocolRoutes);
}

/** The `/oauth/*` endpoints, with their own body parser and the RFC error shape. */
async function protocolRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    if (appError.code === 'internal_error') request.log.error({ err: error }, 'unexpected error');
    for (const [name, value] of Object.entries(appError.options.headers ?? {})) reply.header(name, value);
    const { status, error: code } = oauthErrorFor(appError, request.url.startsWith('/oauth/token'));
    return oauthError(reply.code(status), code, appError.message);
  });

  // A browser navigation: the answer is always a redirect (the consent page, or the client with an error).
  app.get('/oauth/authorize', async (request, reply) => {
    const location = await services.oauthAuthorizations.authorize(request.query as Record<string, unknown>);
    return reply.header('cache-control', 'no-store').redirect(location, 302);
  });

  app.post('/oauth/register', async (request, reply) => {
    const registered = await services.oauthClients.register(request.body, clientInfo(request));
    return reply.code(201).header('cache-control', 'no-store').header('pragma', 'no-cache').send(registered);
  });

  app.post('/oauth/token', async (request, reply) => {
    const body = objectBody(request);
    const tokens = await tokenResponse(body, request);
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(tokens);
  });

  app.post('/oauth/revoke', async (request, reply) => {
    await services.oauthTokens.revoke(objectBody(request));
    return reply.header('cache-control', 'no-store').send({});
  });

  app.post('/oauth/device_authorization', async (request, reply) => {
    const body = objectBody(request);
    if (typeof body.client_id !== 'string' || body.client_id.length === 0) throw new AppError('invalid_request', bilingual('client_id is required.', 'client_id 为必填项。'));
    const started = await services.deviceAuth.start({ client: body.client_id }, clientInfo(request));
    return reply.header('cache-control', 'no-store').send(rfcDeviceResponse(started));
  });

  async function tokenResponse(body: Record<string, unknown>, request: FastifyRequest): Promise<Record<string, unknown>> {
    switch (body.grant_type) {
      case 'authorization_code':
        return { ...(await services.oauthTokens.exchangeCode(body, clientInfo(request))) };
      case 'refresh_token':
        return { ...(await services.oauthTokens.refresh(body)) };
      case deviceCodeGrantType: {
        if (typeof body.device_code !== 'string' || body.device_code.length === 0) throw new AppError('invalid_request', bilingual('device_code is required.', 'device_code 为必填项。'));
        const clientId = typeof body.client_id === 'string' ? body.client_id : undefined;
        const token = await services.deviceAuth.poll({ deviceCode: body.device_code, clientId }, clientInfo(request));
        return { access_token: token.sessionToken, token_type: token.tokenType, expires_in: token.expiresIn };
      }
      default:
        throw new AppError(
          'unsupported_grant_type',
          bilingual('grant_type must be one of {grants}.', 'grant_type 必须是以下之一：{grants}。', { grants: [...grantTypes, deviceCodeGrantType].join(', ') }),
          { param: 'grant_type' },
        );
    }
  }
}

/**
 * The RFC error for a service error. Too many requests stay a 429 (with Retry-After) but say `slow_down` on
 * the token endpoint, which RFC 8628 clients already answer by polling less often.
 */
function oauthErrorFor(error: AppError, tokenEndpoint: boolean): { status: number; error: string } {
  switch (error.code) {
    case 'authorization_pending':
    case 'slow_down':
    case 'access_denied':
    case 'expired_token':
    case 'invalid_grant':
    case 'invalid_target':
    case 'invalid_redirect_uri':
    case 'invalid_client_metadata':
    case 'unsupported_grant_type':
      return { status: 400, error: error.code };
    case 'invalid_client':
      return { status: 401, error: error.code };
    case 'rate_limited':
      return { status: 429, error: tokenEndpoint ? 'slow_down' : 'temporarily_unavailable' };
    case 'service_unavailable':
      return { status: 503, error: 'temporarily_unavailable' };
    case 'internal_error':
      return { status: 500, error: 'server_error' };
    case 'payload_too_large':
      return { status: 413, error: 'invalid_request' };
    default:
      return { status: 400, error: 'invalid_request' };
  }
}

/** RFC 6749 §5.2 error body: `{error, error_description}`, never cached. */
function oauthError(reply: FastifyReply, error: string, description: string): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send({ error, error_description: description });
}
