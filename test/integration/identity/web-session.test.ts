/**
 * Web sign-in on real PostgreSQL + Redis: sign-up and password sign-in (argon2id parameters read back
 * from the PHC string), the session cookie's attributes, rotation at sign-in, idle and absolute expiry,
 * sign-out revocation, the Origin check, email codes, throttling, the API-key endpoints, and that neither
 * the database nor the logs hold a plaintext key, token or password.
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { Browser, mailedCode, uniqueEmail, uniqueIp } from '../../helpers/browser.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let server: TestApp;
const logLines: string[] = [];
/** Every secret this file sees, to look for in the database dump and the logs. */
const secrets = new Set<string>();

beforeAll(async () => {
  setup = await realMode();
  server = await startApp(setup.config, { config: { auth: { throttle: { signInPerMinutePerIp: 1000, signUpPerHourPerIp: 1000 } } }, logLines: logLines });
});

afterAll(async () => {
  await server?.close();
  await setup?.cleanup();
});

const password = 'correct horse battery staple';

async function signedUp(): Promise<{ browser: Browser; email: string }> {
  const browser = new Browser(server.url);
  const email = uniqueEmail('web');
  await browser.signUp(email, password);
  secrets.add(browser.cookie!);
  return { browser, email };
}

function setCookieOf(response: Response): string {
  return response.headers.getSetCookie().find((line) => line.startsWith('svc_membership_session='))!;
}

describe('sign-up and sign-in', () => {
  it('signs up (the emailed code creates the account) with a session cookie: HttpOnly, SameSite=Lax, Path=/, no Domain, not Secure over http, token not in the body', async () => {
    const browser = new Browser(server.url);
    const email = uniqueEmail('cookie');
    const started = await browser.fetch('/api/membership/auth/signup', { body: { email: email.toUpperCase(), password } });
    expect(started.status).toBe(202);
    expect(setCookieOf(started)).toBeUndefined();
    expect(await started.json()).toMatchObject({ ok: true, email: email.toLowerCase() });
    const { rows: none } = await setup.database.query('select 1 from account where email = $1', [email.toLowerCase()]);
    expect(none).toEqual([]);
    const response = await browser.fetch('/api/membership/auth/email-code/verify', { body: { email, code: mailedCode(server.url, email.toLowerCase()) } });
    expect(response.status).toBe(200);
    const cookie = setCookieOf(response);
    expect(cookie).toMatch(/^svc_membership_session=svc_sess_[A-Za-z0-9_-]{43}; /);
    const attributes = cookie.split('; ').slice(1);
    expect(attributes).toEqual(expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Lax']));
    expect(attributes.some((a) => /^Max-Age=\d+$/.test(a) && Number(a.slice(8)) > 29 * 86_400 && Number(a.slice(8)) <= 30 * 86_400)).toBe(true);
    expect(attributes.some((a) => a.startsWith('Domain'))).toBe(false);
    expect(attributes).not.toContain('Secure');
    const text = await response.text();
    expect(text).not.toContain(browser.cookie!);
    expect(JSON.parse(text)).toMatchObject({ ok: true, account: { email: email.toLowerCase(), role: 'member', planPackage: 'free', hasPassword: true } });
    secrets.add(browser.cookie!);

    const me = await browser.fetch('/api/membership/me');
    expect(await me.json()).toMatchObject({ ok: true, account: { email: email.toLowerCase() }, credential: { kind: 'web_session' } });
  });

  it('sets Secure when the web URL is https', async () => {
    const secure = await startApp(setup.config, { config: {} });
    try {
      const email = uniqueEmail('secure');
      await secure.app.services.accounts.signUp({ email, password });
      const response = await fetch(`${secure.url}/api/membership/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
        body: JSON.stringify({ email, password }),
      });
      // Not behind a trusted proxy: x-forwarded-proto is ignored, so the cookie stays non-Secure over http.
      expect(setCookieOf(response)).not.toContain('Secure');
    } finally {
      await secure.close();
    }
    const https = await startApp(setup.config, { config: {} });
    (https.config.server as { webUrl: string }).webUrl = 'https://svc.example.com';
    try {
      const email = uniqueEmail('secure');
      await https.app.services.accounts.signUp({ email, password });
      const response = await fetch(`${https.url}/api/membership/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      expect(setCookieOf(response).split('; ')).toContain('Secure');
    } finally {
      await https.close();
    }
  });

  it('stores argon2id with m ≥ 19 MiB, t ≥ 2, p = 1', async () => {
    const { email } = await signedUp();
    const { rows } = await setup.database.query('select password_hash from account where email = $1', [email]);
    const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(rows[0].password_hash as string);
    expect(match).not.toBeNull();
    const [, m, t, p] = match!.map(Number);
    expect(m).toBeGreaterThanOrEqual(19_456);
    expect(t).toBeGreaterThanOrEqual(2);
    expect(p).toBe(1);
  });

  it('answers a taken email as a new one (its owner is mailed), rejects short passwords and bad emails with precise messages', async () => {
    const { email } = await signedUp();
    const again = await new Browser(server.url).fetch('/api/membership/auth/signup', { body: { email, password } });
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({ ok: true, email });
    expect(server.app.services.mailer.lastTo(email)!.subject).toMatch(/tried to sign up/);
    const short = await new Browser(server.url).fetch('/api/membership/auth/signup', { body: { email: uniqueEmail('short'), password: 'short' } });
    expect(await short.json()).toMatchObject({ code: 'invalid_request', message: 'password must be at least 8 characters.', error: { param: 'password' } });
    const bad = await new Browser(server.url).fetch('/api/membership/auth/signup', { body: { email: 'not-an-email', password } });
    expect(await bad.json()).toMatchObject({ code: 'invalid_request', error: { param: 'email' } });
  });

  it('wrong password and unknown email answer the same', async () => {
    const { email } = await signedUp();
    const wrong = await new Browser(server.url).fetch('/api/membership/auth/login', { body: { email, password: 'wrong password!' } });
    const unknown = await new Browser(server.url).fetch('/api/membership/auth/login', { body: { email: uniqueEmail('nobody'), password: 'wrong password!' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const [a, b] = [(await wrong.json()) as Record<string, unknown>, (await unknown.json()) as Record<string, unknown>];
    expect(a.message).toBe(b.message);
    expect(a.code).toBe('invalid_credentials');
    expect(b.code).toBe('invalid_credentials');
  });

  it('rotates the session at sign-in: the cookie from before stops working', async () => {
    const { browser, email } = await signedUp();
    const before = browser.cookie!;
    const login = await browser.fetch('/api/membership/auth/login', { body: { email, password } });
    expect(login.status).toBe(200);
    expect(browser.cookie).not.toBe(before);
    secrets.add(browser.cookie!);
    const stale = new Browser(server.url);
    stale.cookie = before;
    expect((await stale.fetch('/api/membership/me')).status).toBe(401);
    expect((await browser.fetch('/api/membership/me')).status).toBe(200);
  });

  it('sign-out revokes the session on the server, not just the cookie', async () => {
    const { browser } = await signedUp();
    const token = browser.cookie!;
    const out = await browser.fetch('/api/membership/auth/logout', { method: 'POST' });
    expect(out.status).toBe(200);
    expect(setCookieOf(out)).toContain('Max-Age=0');
    const replay = new Browser(server.url);
    replay.cookie = token;
    expect((await replay.fetch('/api/membership/me')).status).toBe(401);
  });

  it('ends sessions after 7 idle days and 30 days absolute', async () => {
    const { browser } = await signedUp();
    await server.app.services.lastUsed.flush();
    const hash = (await setup.database.query(`select token_hash from session order by created_at desc limit 1`)).rows[0].token_hash as string;
    // A fresh instance (cold cache) judges from the database.
    const fresh = await startApp(setup.config, { config: {} });
    try {
      const probe = new Browser(fresh.url);
      probe.cookie = browser.cookie;
      expect((await probe.fetch('/api/membership/me')).status).toBe(200);
      await fresh.app.services.lastUsed.flush();
      await setup.database.query(`update session set last_used_at = now() - interval '8 days' where token_hash = $1`, [hash]);
      await fresh.app.services.identity.invalidate({ tokenHashes: [hash] });
      expect((await probe.fetch('/api/membership/me')).status).toBe(401);
      await setup.database.query(`update session set last_used_at = now(), expires_at = now() - interval '1 second' where token_hash = $1`, [hash]);
      await fresh.app.services.identity.invalidate({ tokenHashes: [hash] });
      expect((await probe.fetch('/api/membership/me')).status).toBe(401);
    } finally {
      await fresh.close();
    }
  });

  it('throttles sign-in per account with 429 and Retry-After', async () => {
    const strict = await startApp({ ...setup.config, redis: { ...(setup.config.redis as object), keyPrefix: `svc-test:signin-${Date.now()}:` } }, { config: { auth: { throttle: { signInPerHourPerAccount: 3 } } } });
    try {
      const email = uniqueEmail('throttle');
      const statuses: number[] = [];
      let last: Response | null = null;
      for (let i = 0; i < 4; i += 1) {
        last = await new Browser(strict.url).fetch('/api/membership/auth/login', { body: { email, password: 'wrong password!' } });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await last!.json()).toMatchObject({ code: 'rate_limited' });
    } finally {
      await strict.close();
    }
  });
});

describe('sign-in throttling does not lock the owner out', () => {
  it('an attacker elsewhere exhausts the per-account limit; the owner still signs in from a known address or by email code', async () => {
    const strict = await startApp({ ...setup.config, redis: { ...(setup.config.redis as object), keyPrefix: `svc-test:owner-${Date.now()}:` } }, { config: { server: { trustedProxies: ['127.0.0.1'] }, auth: { throttle: { signInPerHourPerAccount: 3 } } } });
    try {
      const email = uniqueEmail('owner');
      const owner = new Browser(strict.url);
      owner.ip = uniqueIp();
      await owner.signUp(email, password);
      expect((await owner.fetch('/api/membership/auth/login', { body: { email, password } })).status).toBe(200);

      const attackers = Array.from({ length: 4 }, () => Object.assign(new Browser(strict.url), { ip: uniqueIp() }));
      const statuses = [];
      for (const attacker of attackers) statuses.push((await attacker.fetch('/api/membership/auth/login', { body: { email, password: 'wrong password!' } })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      // Even the right password from a new address waits: the limit is per account.
      const stranger = Object.assign(new Browser(strict.url), { ip: uniqueIp() });
      expect((await stranger.fetch('/api/membership/auth/login', { body: { email, password } })).status).toBe(429);

      // The owner, from the address they signed in from before, is not locked out …
      expect((await owner.fetch('/api/membership/auth/login', { body: { email, password } })).status).toBe(200);
      // … and from anywhere by email code, which has its own attempt limit.
      const travelling = Object.assign(new Browser(strict.url), { ip: uniqueIp() });
      await travelling.fetch('/api/membership/auth/email-code/start', { body: { email } });
      const code = /\b(\d{6})\b/.exec(strict.app.services.mailer.lastTo(email)!.text)![1]!;
      expect((await travelling.fetch('/api/membership/auth/email-code/verify', { body: { email, code } })).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('concurrent wrong passwords cannot get past the per-account limit', async () => {
    const strict = await startApp({ ...setup.config, redis: { ...(setup.config.redis as object), keyPrefix: `svc-test:burst-${Date.now()}:` } }, { config: { server: { trustedProxies: ['127.0.0.1'] }, auth: { throttle: { signInPerHourPerAccount: 3 } } } });
    try {
      const email = uniqueEmail('burst');
      await strict.app.services.accounts.signUp({ email, password });
      const attempts = await Promise.all(
        Array.from({ length: 12 }, () => Object.assign(new Browser(strict.url), { ip: uniqueIp() }).fetch('/api/membership/auth/login', { body: { email, password: 'wrong password!' } })),
      );
      const statuses = attempts.map((response) => response.status);
      expect(statuses.filter((status) => status === 401)).toHaveLength(3);
      expect(statuses.filter((status) => status === 429)).toHaveLength(9);
    } finally {
      await strict.close();
    }
  });
});

describe('account pre-hijacking', () => {
  it('whoever proves the email first takes the account: the password set before the proof, its sessions and keys stop working', async () => {
    const email = uniqueEmail('victim');
    // Someone signs up with an address that is not theirs and makes a key.
    // (Web sign-up proves the address first now: the squatter's account is one made before that, or by the CLI.)
    const squatter = new Browser(server.url);
    await server.app.services.accounts.signUp({ email, password: 'squatter password' });
    expect((await squatter.fetch('/api/membership/auth/login', { body: { email, password: 'squatter password' } })).status).toBe(200);
    secrets.add(squatter.cookie!);
    const key = (await (await squatter.fetch('/api/membership/auth/api-keys', { body: { name: 'backdoor' } })).json()) as { token: string };
    secrets.add(key.token);
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key.token}` } })).status).toBe(200);

    // The owner of the address signs in by email code.
    const owner = new Browser(server.url);
    await owner.fetch('/api/membership/auth/email-code/start', { body: { email } });
    const code = /\b(\d{6})\b/.exec(server.app.services.mailer.lastTo(email)!.text)![1]!;
    const verified = await owner.fetch('/api/membership/auth/email-code/verify', { body: { email, code } });
    expect(await verified.json()).toMatchObject({ ok: true, account: { email, emailVerified: true, hasPassword: false } });
    secrets.add(owner.cookie!);

    expect((await squatter.fetch('/api/membership/me')).status).toBe(401);
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key.token}` } })).status).toBe(401);
    const again = await new Browser(server.url).fetch('/api/membership/auth/login', { body: { email, password: 'squatter password' } });
    expect(again.status).toBe(401);
    expect((await owner.fetch('/api/membership/me')).status).toBe(200);
    expect(((await (await owner.fetch('/api/membership/auth/api-keys')).json()) as { keys: unknown[] }).keys).toEqual([]);

    // Later proofs change nothing: the owner's own session and keys survive the next email-code sign-in.
    const mine = (await (await owner.fetch('/api/membership/auth/api-keys', { body: { name: 'mine' } })).json()) as { token: string };
    secrets.add(mine.token);
    await new Browser(server.url).fetch('/api/membership/auth/email-code/start', { body: { email } });
    const second = /\b(\d{6})\b/.exec(server.app.services.mailer.lastTo(email)!.text)![1]!;
    expect((await new Browser(server.url).fetch('/api/membership/auth/email-code/verify', { body: { email, code: second } })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${mine.token}` } })).status).toBe(200);
  });
});

describe('bad input never gives a 500', () => {
  it('control characters (NUL) in emails and key names are a 400 with the field named', async () => {
    for (const path of ['/api/membership/auth/signup', '/api/membership/auth/login', '/api/membership/auth/email-code/start']) {
      const response = await new Browser(server.url).fetch(path, { body: { email: 'a\u0000b@example.com', password } });
      expect(response.status, path).toBe(400);
      expect(await response.json(), path).toMatchObject({ code: 'invalid_request', error: { param: 'email' } });
    }
    const { browser } = await signedUp();
    const rest = await browser.fetch('/api/membership/auth/api-keys', { body: { name: 'a\u0000b' } });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ code: 'invalid_request', error: { param: 'name' } });
    const graphql = await browser.graphql('mutation($n: String!) { createApiKey(name: $n) { token } }', { n: 'x\u0000y' });
    expect(graphql.errors![0]!.extensions).toMatchObject({ code: 'invalid_request' });
    const long = await browser.fetch(`/api/membership/auth/sessions/${'x'.repeat(90)}`, { method: 'DELETE' });
    expect(long.status).toBe(404);
    expect(((await long.json()) as { message: string }).message).toBe('That is not a session id.');
    for (const path of [`/api/membership/auth/sessions/${'x'.repeat(5000)}`, `/api/membership/auth/api-keys/${'x'.repeat(200)}`, '/api/membership/auth/api-keys/%E0%A4%A']) {
      const response = await browser.fetch(path, { method: 'DELETE' });
      expect(response.status, path.slice(0, 60)).toBe(400);
      expect(response.headers.get('x-svc-request-id')).toMatch(/^mbr_/);
      expect(await response.json()).toMatchObject({ ok: false, code: 'invalid_request', stage: 'validation' });
    }
  });
});

describe('Origin check on cookie-authenticated state changes', () => {
  it('refuses a cross-site or origin-less POST with 403 forbidden (stage auth), accepts our origin', async () => {
    const { browser } = await signedUp();
    const evil = new Browser(server.url, 'https://evil.example');
    evil.cookie = browser.cookie;
    const crossSite = await evil.fetch('/api/membership/auth/api-keys', { body: { name: 'stolen' } });
    expect(crossSite.status).toBe(403);
    expect(crossSite.headers.get('x-svc-error-stage')).toBe('auth');
    expect(await crossSite.json()).toMatchObject({ code: 'forbidden', stage: 'auth' });

    const noOrigin = await fetch(`${server.url}/api/membership/auth/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `svc_membership_session=${browser.cookie}` },
      body: '{"name":"x"}',
    });
    expect(noOrigin.status).toBe(403);

    const viaReferer = await fetch(`${server.url}/api/membership/auth/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `svc_membership_session=${browser.cookie}`, referer: `${server.url}/account` },
      body: '{"name":"referer"}',
    });
    expect(viaReferer.status).toBe(201);
    secrets.add(((await viaReferer.json()) as { token: string }).token);

    const graphqlCrossSite = await evil.fetch('/graphql', { body: { query: 'mutation { createApiKey(name: "x") { token } }' } });
    expect(graphqlCrossSite.status).toBe(403);
    // Signing in over GraphQL from another site is refused as on REST (login CSRF), cookie or not.
    const { email } = await signedUp();
    for (const path of ['/graphql', '/api/membership/auth/login']) {
      const stranger = new Browser(server.url, 'https://evil.example');
      const response = await stranger.fetch(path, {
        body: path === '/graphql' ? { query: `mutation { signIn(email: "${email}", password: "${password}") { id } }` } : { email, password },
      });
      expect(response.status, path).toBe(403);
      expect(stranger.cookie, path).toBeNull();
    }
    // Reads stay possible (GET has no Origin requirement).
    expect((await evil.fetch('/api/membership/auth/api-keys')).status).toBe(200);
  });
});

describe('graphql-ws authentication by the session cookie', () => {
  /** Runs one operation over graphql-ws with the upgrade request's cookie and Origin; the close code if closed. */
  async function overSocket(cookie: string, origin: string | null): Promise<{ data?: unknown; closeCode?: number }> {
    const headers: Record<string, string> = { cookie: `svc_membership_session=${cookie}`, ...(origin ? { origin } : {}) };
    const Socket = class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers });
      }
    };
    let closeCode: number | undefined;
    const client = createClient({
      url: `${server.url.replace('http', 'ws')}/graphql`,
      webSocketImpl: Socket,
      retryAttempts: 0,
      on: { closed: (event) => (closeCode = (event as { code: number }).code) },
    });
    try {
      const data = await new Promise<unknown>((resolve, reject) => {
        let value: unknown;
        client.subscribe({ query: '{ me { email } }' }, { next: (result) => (value = result.data), error: reject, complete: () => resolve(value) });
      });
      return { data };
    } catch {
      return { closeCode };
    } finally {
      await client.dispose();
    }
  }

  it('uses the cookie only with our Origin, and closes with 4403 when the session is revoked', async () => {
    const { browser, email } = await signedUp();
    expect(await overSocket(browser.cookie!, server.url)).toEqual({ data: { me: { email } } });
    // Cross-site WebSocket hijacking: another site's page cannot ride the cookie.
    expect(await overSocket(browser.cookie!, 'https://evil.example')).toEqual({ data: { me: null } });
    expect(await overSocket(browser.cookie!, null)).toEqual({ data: { me: null } });
    const stale = browser.cookie!;
    await browser.fetch('/api/membership/auth/logout', { method: 'POST' });
    expect(await overSocket(stale, server.url)).toEqual({ closeCode: 4403 });
  });
});

describe('personal API keys over REST', () => {
  it('creates (token once), lists prefix/last4, revokes; a bearer alone gets 401', async () => {
    const { browser } = await signedUp();
    const created = await browser.fetch('/api/membership/auth/api-keys', { body: { name: 'laptop' } });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const body = (await created.json()) as { token: string; id: string; prefix: string; last4: string; name: string; createdAt: string; lastUsedAt: null };
    secrets.add(body.token);
    expect(body).toMatchObject({ ok: true, name: 'laptop', prefix: body.token.slice(0, 12), last4: body.token.slice(-4), lastUsedAt: null });
    expect(body.token).toMatch(/^svc_live_/);

    const list = (await (await browser.fetch('/api/membership/auth/api-keys')).json()) as { keys: Record<string, unknown>[] };
    const zero = { amountMicros: 0, amount: '0.00', currency: 'USD' };
    const noLimits = { budgetDay: null, budgetMonth: null, requestsPerMinute: null, models: null, expiresAt: null, spentToday: zero, spentThisMonth: zero };
    expect(list.keys).toEqual([{ id: body.id, name: 'laptop', prefix: body.prefix, last4: body.last4, createdAt: body.createdAt, lastUsedAt: null, limits: noLimits }]);
    expect(JSON.stringify(list)).not.toContain(body.token);

    const bearerOnly = await fetch(`${server.url}/api/membership/auth/api-keys`, { headers: { authorization: `Bearer ${body.token}` } });
    expect(bearerOnly.status).toBe(401);
    expect(await bearerOnly.json()).toMatchObject({ code: 'sign_in_required', message: expect.stringContaining('bearer credential alone') });
    const bearerCreate = await fetch(`${server.url}/api/membership/auth/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${body.token}`, 'content-type': 'application/json' },
      body: '{"name":"more"}',
    });
    expect(bearerCreate.status).toBe(401);

    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${body.token}` } })).status).toBe(200);
    const revoked = await browser.fetch(`/api/membership/auth/api-keys/${body.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${body.token}` } })).status).toBe(401);
    const again = await browser.fetch(`/api/membership/auth/api-keys/${body.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
  });

  it('GraphQL apiKeys/createApiKey/revokeApiKey share the service', async () => {
    const { browser } = await signedUp();
    const created = await browser.graphql<{ createApiKey: { token: string; key: { id: string; prefix: string } } }>(
      'mutation { createApiKey(name: "ci") { token key { id prefix last4 name } } }',
    );
    const { token, key } = created.data!.createApiKey;
    secrets.add(token);
    expect(key.prefix).toBe(token.slice(0, 12));
    const listed = await browser.graphql<{ apiKeys: { id: string }[] }>('{ apiKeys { id name prefix last4 createdAt lastUsedAt } }');
    expect(listed.data!.apiKeys.map((k) => k.id)).toEqual([key.id]);
    const revoked = await browser.graphql<{ revokeApiKey: { id: string } }>('mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: key.id });
    expect(revoked.data!.revokeApiKey.id).toBe(key.id);
    const anonymous = await new Browser(server.url).graphql('{ apiKeys { id } }');
    expect(anonymous.errors![0]!.extensions!.code).toBe('sign_in_required');
  });
});

describe('email one-time codes', () => {
  it('signs in (creating the account) with the 6-digit code from the outbox; 5 attempts; one use', async () => {
    const email = uniqueEmail('code');
    const browser = new Browser(server.url);
    const started = await browser.fetch('/api/membership/auth/email-code/start', { body: { email } });
    expect(await started.json()).toMatchObject({ ok: true, email, expiresIn: 600 });
    const mail = server.app.services.mailer.lastTo(email)!;
    const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
    const wrongCode = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i += 1) {
      const wrong = await browser.fetch('/api/membership/auth/email-code/verify', { body: { email, code: wrongCode } });
      expect(wrong.status).toBe(401);
    }
    const right = await browser.fetch('/api/membership/auth/email-code/verify', { body: { email, code } });
    expect(right.status).toBe(200);
    expect(await right.json()).toMatchObject({ ok: true, account: { email, emailVerified: true, hasPassword: false } });
    expect(setCookieOf(right)).toBeDefined();
    secrets.add(browser.cookie!);
    const reuse = await new Browser(server.url).fetch('/api/membership/auth/email-code/verify', { body: { email, code } });
    expect(reuse.status).toBe(401);
  });

  it('a sixth attempt fails even with the right code', async () => {
    const email = uniqueEmail('code-limit');
    const browser = new Browser(server.url);
    await browser.fetch('/api/membership/auth/email-code/start', { body: { email } });
    const code = /\b(\d{6})\b/.exec(server.app.services.mailer.lastTo(email)!.text)![1]!;
    const wrongCode = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i += 1) await browser.fetch('/api/membership/auth/email-code/verify', { body: { email, code: wrongCode } });
    const right = await browser.fetch('/api/membership/auth/email-code/verify', { body: { email, code } });
    expect(right.status).toBe(401);
    expect(await right.json()).toMatchObject({ code: 'invalid_credentials', error: { param: 'code' } });
  });

  it('GraphQL signIn/startEmailCode/verifyEmailCode/signOut/me use the same services and set the cookie', async () => {
    const { email } = await signedUp();
    const browser = new Browser(server.url);
    const signedIn = await browser.graphql<{ signIn: { email: string } }>('mutation($e: String!, $p: String!) { signIn(email: $e, password: $p) { email role } }', {
      e: email,
      p: password,
    });
    expect(signedIn.data?.signIn.email).toBe(email);
    expect(browser.cookie).toMatch(/^svc_sess_/);
    secrets.add(browser.cookie!);
    expect((await browser.graphql<{ me: { email: string } }>('{ me { email } }')).data?.me.email).toBe(email);
    expect((await browser.graphql<{ signOut: boolean }>('mutation { signOut }')).data?.signOut).toBe(true);
    expect(browser.cookie).toBeNull();
    expect((await browser.graphql<{ me: null }>('{ me { email } }')).data?.me).toBeNull();
  });
});

describe('secrets at rest and in logs', () => {
  it('no table holds a plaintext key, session token or password', async () => {
    expect(secrets.size).toBeGreaterThan(5);
    const { rows: tables } = await setup.database.query(`select tablename from pg_tables where schemaname = 'public'`);
    let dump = '';
    for (const { tablename } of tables as { tablename: string }[]) {
      const { rows } = await setup.database.query(`select * from "${tablename}"`);
      dump += JSON.stringify(rows);
    }
    expect(dump).toContain('svc_live_'); // prefixes are stored, as lists show them
    for (const secret of secrets) expect(dump).not.toContain(secret);
    expect(dump).not.toContain(password);
    expect(dump).not.toMatch(/svc_(live|sess)_[A-Za-z0-9_-]{43}/);
  });

  it('logs never carry a key, a session token, a cookie or a password', async () => {
    const text = logLines.join('\n');
    expect(text.length).toBeGreaterThan(1000);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toContain(password);
    expect(text).not.toMatch(/svc_(live|sess)_[A-Za-z0-9_-]{20,}/);
  });
});
