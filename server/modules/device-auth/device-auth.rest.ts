/**
 * Device login over HTTP: the spec's JSON endpoints (`/api/membership/auth/device/start|poll`, errors in the
 * service envelope) and the standard RFC 8628 endpoints (`/oauth/device_authorization`, `/oauth/token`,
 * form-encoded, RFC 6749 error bodies) plus RFC 8414 metadata. Both call `DeviceAuthService`.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { toAppError } from '../../http/envelope.ts';
import { objectBody } from '../../http/body.ts';
import { clientInfo } from '../../http/web-session.ts';
import type { DeviceStart } from './device-auth.service.ts';

export const deviceCodeGrantType = 'urn:ietf:params:oauth:grant-type:device_code';

export async function deviceAuthRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;

  app.post('/api/membership/auth/device/start', async (request, reply) => {
    const body = objectBody(request);
    const started = await services.deviceAuth.start({ client: body.client }, clientInfo(request));
    return reply.header('cache-control', 'no-store').send({ ok: true, ...rfcDeviceResponse(started) });
  });

  app.post('/api/membership/auth/device/poll', async (request, reply) => {
    const body = objectBody(request);
    const token = await services.deviceAuth.poll({ deviceCode: body.device_code }, clientInfo(request));
    return reply.header('cache-control', 'no-store').send({
      ok: true,
      sessionToken: token.sessionToken,
      tokenType: token.tokenType,
      expiresAt: token.expiresAt,
      account: token.account,
    });
  });

  app.get('/.well-known/oauth-authorization-server', async (_request, reply) => {
    const base = services.config.server.baseUrl;
    return reply.header('cache-control', 'public, max-age=300').send({
      issuer: base,
      device_authorization_endpoint: `${base}/oauth/device_authorization`,
      token_endpoint: `${base}/oauth/token`,
      grant_types_supported: [deviceCodeGrantType],
      response_types_supported: [],
      token_endpoint_auth_methods_supported: ['none'],
      service_documentation: `${services.config.server.webUrl}/docs`,
    });
  });

  await app.register(oauthRoutes);
}

/**
 * The `/oauth/*` endpoints take `application/x-www-form-urlencoded` bodies (RFC 8628 §3.1, §3.4) and answer
 * every error, malformed bodies and limits included, in the RFC 6749 §5.2 shape (`{error, error_description}`,
 * `Cache-Control: no-store`), never the service envelope.
 */
async function oauthRoutes(app: FastifyInstance): Promise<void> {
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

  app.post('/oauth/device_authorization', async (request, reply) => {
    const body = objectBody(request);
    if (typeof body.client_id !== 'string' || body.client_id.length === 0) throw new AppError('invalid_request', bilingual('client_id is required.', 'client_id 为必填项。'));
    const started = await services.deviceAuth.start({ client: body.client_id }, clientInfo(request));
    return reply.header('cache-control', 'no-store').send(rfcDeviceResponse(started));
  });

  app.post('/oauth/token', async (request, reply) => {
    const body = objectBody(request);
    if (body.grant_type !== deviceCodeGrantType) {
      return oauthError(reply.code(400), 'unsupported_grant_type', `grant_type must be ${deviceCodeGrantType}.`);
    }
    if (typeof body.device_code !== 'string' || body.device_code.length === 0) throw new AppError('invalid_request', bilingual('device_code is required.', 'device_code 为必填项。'));
    const clientId = typeof body.client_id === 'string' ? body.client_id : undefined;
    const token = await services.deviceAuth.poll({ deviceCode: body.device_code, clientId }, clientInfo(request));
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send({
      access_token: token.sessionToken,
      token_type: token.tokenType,
      expires_in: token.expiresIn,
    });
  });
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
      return { status: 400, error: error.code };
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

function rfcDeviceResponse(started: DeviceStart) {
  return {
    device_code: started.deviceCode,
    user_code: started.userCode,
    verification_uri: started.verificationUri,
    verification_uri_complete: started.verificationUriComplete,
    expires_in: started.expiresIn,
    interval: started.interval,
  };
}

/** RFC 6749 §5.2 error body: `{error, error_description}`, never cached. */
function oauthError(reply: FastifyReply, error: string, description: string): FastifyReply {
  return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send({ error, error_description: description });
}
