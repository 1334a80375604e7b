/**
 * Device login over HTTP: the spec's JSON endpoints (`/api/membership/auth/device/start|poll`, errors in the
 * service envelope). The standard RFC 8628 endpoints (`/oauth/device_authorization`, the device grant of
 * `/oauth/token`) are in the OAuth module's `oauth.rest.ts`; both call `DeviceAuthService`.
 */
import type { FastifyInstance } from 'fastify';
import { objectBody } from '../../http/body.ts';
import { clientInfo } from '../../http/web-session.ts';
import type { DeviceStart } from './device-auth.service.ts';

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
}

/** The RFC 8628 device authorization response (also the body of the spec's `device/start`). */
export function rfcDeviceResponse(started: DeviceStart) {
  return {
    device_code: started.deviceCode,
    user_code: started.userCode,
    verification_uri: started.verificationUri,
    verification_uri_complete: started.verificationUriComplete,
    expires_in: started.expiresIn,
    interval: started.interval,
  };
}
