/**
 * Web sign-in (DESIGN §4 "Web sign-in"): the REST compatibility routes, calling the same services as the
 * GraphQL mutations. Every route that signs in sets a fresh `svc_membership_session` cookie.
 */
import type { FastifyInstance } from 'fastify';
import { objectBody, stringField } from '../../http/body.ts';
import { route } from '../../http/route-access.ts';
import { assertSameOrigin, clientInfo, isSecure, readCookie, signOut, webSessionControl } from '../../http/web-session.ts';
import { oidcCallbackPath, oidcCookieName } from './oidc.service.ts';

export async function accountRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;

  // Verification-first, and the same 202 whether or not the address has an account (the owner is mailed
  // instead): `email-code/verify` with the emailed code creates the account and signs in.
  app.post('/api/membership/auth/signup', async (request, reply) => {
    assertSameOrigin(request, services.config, { required: false });
    const body = objectBody(request);
    const started = await services.accounts.requestSignUp({ email: stringField(body, 'email'), password: stringField(body, 'password') }, clientInfo(request));
    return reply.code(202).send({ ok: true, email: started.email, expiresAt: started.expiresAt, expiresIn: services.config.auth.emailCodeTtlSeconds });
  });

  app.post('/api/membership/auth/login', async (request, reply) => {
    assertSameOrigin(request, services.config, { required: false });
    const body = objectBody(request);
    const web = webSessionControl(request, reply, services);
    const account = await services.accounts.signInWithPassword({ email: stringField(body, 'email'), password: stringField(body, 'password') }, web.client);
    await web.start(account.id);
    return { ok: true, account };
  });

  app.post('/api/membership/auth/email-code/start', async (request) => {
    const body = objectBody(request);
    const started = await services.accounts.startEmailCode({ email: stringField(body, 'email') }, clientInfo(request));
    return { ok: true, email: started.email, expiresAt: started.expiresAt, expiresIn: services.config.auth.emailCodeTtlSeconds };
  });

  app.post('/api/membership/auth/email-code/verify', async (request, reply) => {
    assertSameOrigin(request, services.config, { required: false });
    const body = objectBody(request);
    const web = webSessionControl(request, reply, services);
    const account = await services.accounts.verifyEmailCode({ email: stringField(body, 'email'), code: stringField(body, 'code') }, web.client);
    await web.start(account.id);
    return { ok: true, account };
  });

  app.post('/api/membership/auth/logout', route({ auth: 'optional' }), async (request, reply) => {
    // Bearer: a device-login token signs itself out (`svc logout`). Cookie: checked for our Origin on POST.
    await signOut(request.auth.principal, webSessionControl(request, reply, services), services);
    return { ok: true };
  });

  app.get('/api/membership/me', route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    return { ok: true, account: await services.accounts.me(request.principal), credential: { kind: request.principal.credential.kind } };
  });

  /** Which sign-in methods this server offers (the sign-in page reads it). */
  app.get('/api/membership/auth/providers', async () => ({
    ok: true,
    password: true,
    emailCode: services.mailer.deliversToMembers,
    mailDelivery: services.mailer.mode,
    oidc: services.oidc.label ? { label: services.oidc.label, startUrl: '/api/membership/auth/oidc/start' } : null,
  }));

  app.get<{ Querystring: { returnTo?: string } }>('/api/membership/auth/oidc/start', async (request, reply) => {
    const { url, flowId, cookieMaxAge } = await services.oidc.begin(request.query.returnTo);
    reply.header('set-cookie', oidcFlowCookie(flowId, cookieMaxAge, isSecure(request, services.config)));
    return reply.redirect(url.href, 302);
  });

  app.get(oidcCallbackPath, async (request, reply) => {
    // The flow id is spent whatever happens next: clear the cookie on every answer.
    reply.header('set-cookie', oidcFlowCookie('', 0, isSecure(request, services.config)));
    const callbackUrl = new URL(request.url, services.oidc.redirectUri);
    const identity = await services.oidc.complete(callbackUrl, readCookie(request.headers.cookie, oidcCookieName));
    const account = await services.accounts.signInVerified(identity.email, identity.name);
    const web = webSessionControl(request, reply, services);
    await web.start(account.id);
    return reply.redirect(identity.returnTo, 302);
  });
}

function oidcFlowCookie(flowId: string, maxAge: number, secure: boolean): string {
  return [`${oidcCookieName}=${flowId}`, `Path=${oidcCallbackPath}`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`, ...(secure ? ['Secure'] : [])].join('; ');
}
