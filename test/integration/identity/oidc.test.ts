/**
 * Generic OIDC sign-in against a small scripted identity provider (discovery, token endpoint, an ID token
 * with the nonce it was asked for): the in-progress flow lives on the server under a random id, so a
 * forged, foreign or replayed flow cookie, or a callback whose `state` is not the browser's own, is refused
 * before the provider is asked; a right one signs in and sets the session cookie.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { Browser, freePort, uniqueEmail } from '../../helpers/browser.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let server: TestApp;
let idp: ScriptedProvider;

beforeAll(async () => {
  setup = await realMode();
  idp = await scriptedProvider('svc-web');
  server = await startApp(setup.config, { config: { oidc: { issuer: idp.issuer, clientId: 'svc-web', label: 'Example SSO' } } });
});

afterAll(async () => {
  await server?.close();
  await idp?.close();
  await setup?.cleanup();
});

const callbackPath = '/api/membership/auth/oidc/callback';

/** Starts a sign-in like a browser: the flow cookie, and the state and nonce the provider was sent. */
async function begin(returnTo = '/account'): Promise<{ flowCookie: string; state: string; nonce: string }> {
  const response = await fetch(`${server.url}/api/membership/auth/oidc/start?returnTo=${encodeURIComponent(returnTo)}`, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location')!);
  expect(location.origin + location.pathname).toBe(`${idp.issuer}/authorize`);
  expect(location.searchParams.get('code_challenge_method')).toBe('S256');
  const cookie = response.headers.getSetCookie().find((line) => line.startsWith('svc_oidc='))!;
  expect(cookie.split('; ')).toEqual(expect.arrayContaining([`Path=${callbackPath}`, 'HttpOnly', 'SameSite=Lax', 'Max-Age=600']));
  const flowCookie = /^svc_oidc=([^;]+)/.exec(cookie)![1]!;
  return { flowCookie, state: location.searchParams.get('state')!, nonce: location.searchParams.get('nonce')! };
}

function callback(flowCookie: string | null, params: Record<string, string>) {
  return fetch(`${server.url}${callbackPath}?${new URLSearchParams(params)}`, {
    redirect: 'manual',
    headers: flowCookie === null ? {} : { cookie: `svc_oidc=${flowCookie}` },
  });
}

describe('OIDC sign-in', () => {
  it('signs in with the provider’s verified email, sets the session cookie and returns where asked', async () => {
    const email = uniqueEmail('sso');
    const { flowCookie, state, nonce } = await begin('/device?user_code=BCDF-GHJK');
    idp.next = { email, nonce };
    const response = await callback(flowCookie, { code: 'code-1', state });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/device?user_code=BCDF-GHJK');
    const cookies = response.headers.getSetCookie();
    expect(cookies.find((line) => line.startsWith('svc_oidc='))).toContain('Max-Age=0');
    const session = /^svc_membership_session=([^;]+)/.exec(cookies.find((line) => line.startsWith('svc_membership_session='))!)![1]!;
    const browser = new Browser(server.url);
    browser.cookie = session;
    expect(await (await browser.fetch('/api/membership/me')).json()).toMatchObject({ account: { email, emailVerified: true } });
    expect(idp.tokenRequests).toBe(1);
  });

  it('refuses a flow cookie the server did not issue (the old self-describing cookie, forged)', async () => {
    const { state } = await begin();
    const forged = Buffer.from(JSON.stringify({ state, nonce: 'n', verifier: 'v'.repeat(43), returnTo: '/account' })).toString('base64url');
    const before = idp.tokenRequests;
    for (const cookie of [forged, 'A'.repeat(43), null]) {
      const response = await callback(cookie, { code: 'code-2', state });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('start again') });
      // No session; the spent flow cookie is cleared.
      expect(response.headers.getSetCookie()).toEqual([`svc_oidc=; Path=${callbackPath}; HttpOnly; SameSite=Lax; Max-Age=0`]);
    }
    expect(idp.tokenRequests).toBe(before);
  });

  it('refuses another browser’s state (login CSRF) and a replayed flow, without asking the provider', async () => {
    const mine = await begin();
    const theirs = await begin();
    const before = idp.tokenRequests;
    const foreign = await callback(mine.flowCookie, { code: 'attacker-code', state: theirs.state });
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ code: 'invalid_request', error: { param: 'state' } });
    // The flow is spent by that attempt: the right state cannot be replayed on it either.
    const replay = await callback(mine.flowCookie, { code: 'code-3', state: mine.state });
    expect(replay.status).toBe(400);
    expect(idp.tokenRequests).toBe(before);

    // A flow that signed in once cannot sign in again.
    const email = uniqueEmail('sso-replay');
    idp.next = { email, nonce: theirs.nonce };
    expect((await callback(theirs.flowCookie, { code: 'code-4', state: theirs.state })).status).toBe(302);
    expect((await callback(theirs.flowCookie, { code: 'code-4', state: theirs.state })).status).toBe(400);
  });

  it('never signs an unverified provider email into an existing account (nor takes it over)', async () => {
    const email = uniqueEmail('sso-unverified');
    const owner = new Browser(server.url);
    await owner.signUp(email, 'owner password phrase');
    const { flowCookie, state, nonce } = await begin('/account');
    idp.next = { email, nonce, emailVerified: false };
    const response = await callback(flowCookie, { code: 'code-unverified', state });
    expect(response.status).toBe(401);
    expect(response.headers.getSetCookie().some((line) => /^svc_membership_session=[^;]+/.test(line) && !line.includes('Max-Age=0'))).toBe(false);
    expect(((await response.json()) as { code: string; message: string }).message).toMatch(/has not verified/);
    // The owner's password and session still work: nothing was taken over.
    expect((await owner.fetch('/api/membership/me')).status).toBe(200);
    expect((await new Browser(server.url).fetch('/api/membership/auth/login', { body: { email, password: 'owner password phrase' } })).status).toBe(200);
  });

  it('takes over an unverified password account: the squatter’s password and session stop working', async () => {
    const email = uniqueEmail('sso-victim');
    // An account made with a password and never verified (web sign-up proves the address first now; the CLI does not).
    const squatter = new Browser(server.url);
    await server.app.services.accounts.signUp({ email, password: 'squatter password' });
    expect((await squatter.fetch('/api/membership/auth/login', { body: { email, password: 'squatter password' } })).status).toBe(200);
    const { flowCookie, state, nonce } = await begin();
    idp.next = { email, nonce };
    expect((await callback(flowCookie, { code: 'code-5', state })).status).toBe(302);
    expect((await squatter.fetch('/api/membership/me')).status).toBe(401);
    const login = await new Browser(server.url).fetch('/api/membership/auth/login', { body: { email, password: 'squatter password' } });
    expect(login.status).toBe(401);
  });

  it('refuses a disabled account with 401 account_disabled and starts no session', async () => {
    const email = uniqueEmail('sso-disabled');
    const account = await server.app.services.accounts.findOrCreateVerified(email);
    await setup.database.query('update account set disabled_at = now() where id = $1', [account.id]);
    const { flowCookie, state, nonce } = await begin();
    idp.next = { email, nonce };
    const response = await callback(flowCookie, { code: 'code-6', state });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'account_disabled', stage: 'auth' });
    expect(response.headers.getSetCookie().some((line) => line.startsWith('svc_membership_session='))).toBe(false);
  });
});

interface ScriptedProvider {
  issuer: string;
  /** Who the next token response says signed in. */
  next: { email: string; nonce: string; emailVerified?: boolean } | null;
  tokenRequests: number;
  close(): Promise<void>;
}

/** Discovery and a token endpoint; the ID token is unsigned-in-spirit (RS256 header, dummy signature), which
 * openid-client accepts from the token endpoint, as the OIDC spec allows for a TLS-authenticated response. */
async function scriptedProvider(clientId: string): Promise<ScriptedProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const provider: ScriptedProvider = { issuer, next: null, tokenRequests: 0, close: async () => undefined };
  const http: Server = createServer(async (request: IncomingMessage, response) => {
    const url = new URL(request.url ?? '/', issuer);
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (url.pathname === '/token' && request.method === 'POST') {
      for await (const _chunk of request);
      provider.tokenRequests += 1;
      const who = provider.next;
      if (!who) return json(400, { error: 'invalid_grant' });
      const now = Math.floor(Date.now() / 1000);
      const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const claims = { iss: issuer, aud: clientId, sub: `sub-${who.email}`, iat: now, exp: now + 300, nonce: who.nonce, email: who.email, email_verified: who.emailVerified ?? true };
      return json(200, { access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.c2ln` });
    }
    return json(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  provider.close = () => new Promise<void>((resolve) => http.close(() => resolve()));
  return provider;
}
