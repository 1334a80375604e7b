/**
 * Issue 47 item 4: the REST routes declare the credential they need and whether their answer may be cached
 * (`route({ auth, cache })`, http/route-access.ts), and one hook enforces it. What each route accepts is what
 * it accepted when every handler authenticated itself: a bearer API key or session token, or the web session
 * cookie with the Origin check on state changes; bearer requests ignore cookies; what a principal may do
 * (a web session for key management) is still the service's to say.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let member: Person;
let key: string;

beforeAll(async () => {
  mode = await realMode();
  app = await startApp(mode.config);
  member = await seed(app).member();
  key = await member.key();
});
afterAll(async () => {
  await app?.close();
  await mode?.cleanup();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('declared route access', () => {
  it('a signed-in route answers a bearer key and a web session alike, never cached', async () => {
    const byKey = await fetch(`${app.url}/api/membership/me`, { headers: bearer(key) });
    expect(byKey.status).toBe(200);
    expect(byKey.headers.get('cache-control')).toBe('no-store');
    expect(((await byKey.json()) as { credential: { kind: string } }).credential.kind).toBe('api_key');
    const byCookie = await member.web.fetch('/api/membership/me');
    expect(byCookie.status).toBe(200);
    expect(byCookie.headers.get('cache-control')).toBe('no-store');
    expect(((await byCookie.json()) as { credential: { kind: string } }).credential.kind).toBe('web_session');
    const sessions = await member.web.fetch('/api/membership/auth/sessions');
    expect(sessions.status).toBe(200);
    expect(sessions.headers.get('cache-control')).toBe('no-store');
  });

  it('without a credential: 401 sign_in_required; with a bad bearer: 401 even when a good cookie comes along', async () => {
    const none = await fetch(`${app.url}/api/membership/orders`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { code: string }).code).toBe('sign_in_required');
    const bad = await member.web.fetch('/api/membership/usage', { headers: bearer('svc_live_not-a-key') });
    expect(bad.status).toBe(401);
  });

  it('a cookie-authenticated state change must come from our Origin; a bearer request skips that check', async () => {
    const foreign = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'from elsewhere' }, headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { code: string }).code).toBe('forbidden');
    const own = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'from the web app' } });
    expect(own.status).toBe(201);
    expect(own.headers.get('cache-control')).toBe('no-store');
    // Bearer requests skip the Origin check (they ignore cookies); managing keys takes a web session, which
    // the service's authz says with a 401 — so a key cannot mint keys, from any Origin, as before.
    const byKey = await fetch(`${app.url}/api/membership/auth/api-keys`, {
      method: 'POST',
      headers: { ...bearer(key), origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'by a key' }),
    });
    expect(byKey.status).toBe(401);
    expect(((await byKey.json()) as { code: string }).code).toBe('sign_in_required');
  });

  it('sign-out needs no credential (optional auth) and still refuses a bad bearer', async () => {
    const anonymous = await fetch(`${app.url}/api/membership/auth/logout`, { method: 'POST' });
    expect(anonymous.status).toBe(200);
    const bad = await fetch(`${app.url}/api/membership/auth/logout`, { method: 'POST', headers: bearer('svc_live_not-a-key') });
    expect(bad.status).toBe(401);
  });
});
