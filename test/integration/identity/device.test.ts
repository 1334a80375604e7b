/**
 * Device login end to end on real PostgreSQL + Redis: openid-client (a maintained RFC 8628 client) against
 * the `/oauth` endpoints, the spec's JSON endpoints (pending → approved → token works on /v1/models, handed
 * out once), denied, expired, slow_down, the wrong-code lock, ownership and the per-IP start limit.
 */
import * as oauth from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { Browser, sleep, uniqueEmail, uniqueIp, type GraphQLResult } from '../../helpers/browser.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let server: TestApp;

const OPEN = 'query Open($code: String!) { deviceAuthorization(userCode: $code) { userCode clientName state } }';
const APPROVE = 'mutation Approve($code: String!) { approveDevice(userCode: $code) { userCode clientName state } }';
const DENY = 'mutation Deny($code: String!) { denyDevice(userCode: $code) { state } }';

beforeAll(async () => {
  setup = await realMode();
  // 127.0.0.1 is a trusted proxy, so each member browses from an address of its own (X-Forwarded-For) and
  // the per-IP wrong-code lock of one test does not spill into the next.
  server = await startApp(setup.config, { config: {
    server: { trustedProxies: ['127.0.0.1'] },
    auth: { devicePollIntervalSeconds: 1 },
    rateLimits: { deviceStartPerMinute: 1000 },
  } });
});

afterAll(async () => {
  await server?.close();
  await setup?.cleanup();
});

async function member(): Promise<Browser> {
  const browser = new Browser(server.url);
  browser.ip = uniqueIp();
  await browser.signUp(uniqueEmail('device'));
  return browser;
}

async function start(client = 'svc-cli test') {
  const response = await fetch(`${server.url}/api/membership/auth/device/start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as {
    ok: true;
    device_code: string;
    user_code: string;
    verification_uri: string;
    verification_uri_complete: string;
    expires_in: number;
    interval: number;
  };
}

async function poll(deviceCode: string) {
  const response = await fetch(`${server.url}/api/membership/auth/device/poll`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ device_code: deviceCode }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function errorCode(result: GraphQLResult<unknown>): string | undefined {
  return result.errors?.[0]?.extensions?.code;
}

describe('RFC 8628 endpoints with openid-client', () => {
  it('publishes the device grant in RFC 8414 metadata', async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: server.url,
      device_authorization_endpoint: `${server.url}/oauth/device_authorization`,
      token_endpoint: `${server.url}/oauth/token`,
      grant_types_supported: expect.arrayContaining(['urn:ietf:params:oauth:grant-type:device_code']),
    });
  });

  it('completes a device login: discover, authorize, poll while pending, approve, token works on /v1/models', async () => {
    const config = await oauth.discovery(new URL(server.url), 'svc-oauth-test', undefined, oauth.None(), {
      algorithm: 'oauth2',
      execute: [oauth.allowInsecureRequests],
    });
    const authorization = await oauth.initiateDeviceAuthorization(config, {});
    expect(authorization.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(authorization.verification_uri).toBe(`${server.url}/device`);
    expect(authorization.verification_uri_complete).toBe(`${server.url}/device?user_code=${authorization.user_code}`);
    expect(authorization.device_code.length).toBeGreaterThanOrEqual(43);

    const browser = await member();
    const approveSoon = (async () => {
      await sleep(1500);
      const opened = await browser.graphql<{ deviceAuthorization: { clientName: string; state: string } }>(OPEN, { code: authorization.user_code.toLowerCase() });
      expect(opened.data?.deviceAuthorization).toMatchObject({ clientName: 'svc-oauth-test', state: 'pending' });
      const approved = await browser.graphql<{ approveDevice: { state: string } }>(APPROVE, { code: authorization.user_code });
      expect(approved.data?.approveDevice.state).toBe('approved');
    })();
    const tokens = await oauth.pollDeviceAuthorizationGrant(config, authorization);
    await approveSoon;
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.access_token).toMatch(/^svc_sess_/);
    expect(tokens.expires_in).toBeGreaterThan(29 * 86_400);
    const models = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(models.status).toBe(200);
  });

  it('answers RFC-shaped errors: pending, slow_down, unsupported grant, unknown code, expired', async () => {
    const form = (body: Record<string, string>) =>
      fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
    const grant = 'urn:ietf:params:oauth:grant-type:device_code';
    const started = await fetch(`${server.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'rfc-client' }),
    });
    expect(started.headers.get('cache-control')).toBe('no-store');
    const { device_code } = (await started.json()) as { device_code: string };

    const pending = await form({ grant_type: grant, device_code, client_id: 'rfc-client' });
    expect(pending.status).toBe(400);
    expect(await pending.json()).toEqual({ error: 'authorization_pending', error_description: expect.any(String) });
    const fast = await form({ grant_type: grant, device_code, client_id: 'rfc-client' });
    expect(await fast.json()).toMatchObject({ error: 'slow_down' });
    expect(await (await form({ grant_type: grant, device_code, client_id: 'other-client' })).json()).toMatchObject({ error: 'invalid_grant' });
    expect(await (await form({ grant_type: 'password', device_code })).json()).toMatchObject({ error: 'unsupported_grant_type' });
    expect(await (await form({ grant_type: grant, device_code: 'nope' })).json()).toMatchObject({ error: 'invalid_grant' });
    expect(await (await form({ grant_type: grant })).json()).toMatchObject({ error: 'invalid_request' });

    await setup.database.query(`update device_authorization set expires_at = now() - interval '1 second' where client_name = 'rfc-client'`);
    expect(await (await form({ grant_type: grant, device_code })).json()).toMatchObject({ error: 'expired_token' });
  });

  it('answers malformed bodies on /oauth/* in the RFC shape too, never the service envelope', async () => {
    const cases: [string, string, string][] = [
      ['/oauth/token', 'application/json', '{"grant_type":'],
      ['/oauth/token', 'application/json', '[1,2]'],
      ['/oauth/token', 'text/plain', 'hello'],
      ['/oauth/device_authorization', 'application/json', '"x"'],
      ['/oauth/device_authorization', 'text/plain', 'client_id=x'],
      ['/oauth/device_authorization', 'application/x-www-form-urlencoded', 'client_id=%00'],
    ];
    for (const [path, type, body] of cases) {
      const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
      expect(response.status, `${path} ${body}`).toBe(400);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.json(), `${path} ${body}`).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    }
  });
});

describe('spec device endpoints', () => {
  it('pending → approved → sessionToken once → works on /v1/models; the session is listed and revocable', async () => {
    const started = await start('svc-cli 1.0');
    expect(started).toMatchObject({ ok: true, expires_in: 600, interval: 1 });
    const first = await poll(started.device_code);
    expect(first.status).toBe(400);
    expect(first.body).toMatchObject({ ok: false, code: 'authorization_pending', stage: 'auth' });

    const browser = await member();
    const approved = await browser.graphql<{ approveDevice: { clientName: string; state: string } }>(APPROVE, { code: started.user_code.replace('-', '') });
    expect(approved.data?.approveDevice).toEqual({ userCode: started.user_code, clientName: 'svc-cli 1.0', state: 'approved' });

    await sleep(1100);
    const done = await poll(started.device_code);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ ok: true, tokenType: 'Bearer', sessionToken: expect.stringMatching(/^svc_sess_/), account: { email: expect.any(String) } });
    const token = done.body.sessionToken as string;
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);

    await sleep(1100);
    const again = await poll(started.device_code);
    expect(again.body).toMatchObject({ code: 'invalid_grant' });

    const sessions = await browser.graphql<{ sessions: { id: string; kind: string; clientName: string | null; current: boolean }[] }>(
      '{ sessions { id kind clientName current } }',
    );
    const device = sessions.data!.sessions.find((session) => session.kind === 'device')!;
    expect(device.clientName).toBe('svc-cli 1.0');
    expect(sessions.data!.sessions.find((session) => session.current)?.kind).toBe('web');
    const revoked = await browser.fetch(`/api/membership/auth/sessions/${device.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    const after = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
  });

  it('denied → access_denied; expired → expired_token', async () => {
    const denied = await start();
    const browser = await member();
    expect((await browser.graphql<{ denyDevice: { state: string } }>(DENY, { code: denied.user_code })).data?.denyDevice.state).toBe('denied');
    expect((await poll(denied.device_code)).body).toMatchObject({ code: 'access_denied' });

    const expired = await start();
    await setup.database.query(`update device_authorization set expires_at = now() - interval '1 second' where user_code = $1`, [expired.user_code.replace('-', '')]);
    expect((await poll(expired.device_code)).body).toMatchObject({ code: 'expired_token' });
    const late = await browser.graphql(APPROVE, { code: expired.user_code });
    expect(errorCode(late)).toBe('not_found');
  });

  it('slow_down when polled faster than interval, and the interval grows by 5 s for good', async () => {
    const started = await start();
    expect((await poll(started.device_code)).body).toMatchObject({ code: 'authorization_pending' });
    const fast = await poll(started.device_code);
    expect(fast.status).toBe(400);
    expect(fast.body).toMatchObject({ code: 'slow_down' });
    await sleep(1200);
    // The interval is now 6 s: 1.2 s later is still too fast.
    expect((await poll(started.device_code)).body).toMatchObject({ code: 'slow_down' });
  });

  it('five wrong user codes lock code entry for that session, even for the right code', async () => {
    const started = await start();
    const browser = await member();
    for (let i = 1; i <= 5; i += 1) {
      const wrong = await browser.graphql(OPEN, { code: 'BBBB-BBBB' });
      expect(errorCode(wrong)).toBe('not_found');
      expect(wrong.errors![0]!.message).toContain(`${5 - i} ${5 - i === 1 ? 'try' : 'tries'} left`);
    }
    const locked = await browser.graphql(OPEN, { code: started.user_code });
    expect(errorCode(locked)).toBe('rate_limited');
    expect(errorCode(await browser.graphql(APPROVE, { code: started.user_code }))).toBe('rate_limited');
  });

  it('the first signed-in session that opens a code owns it; bearer credentials cannot approve', async () => {
    const started = await start();
    const owner = await member();
    const other = await member();
    expect((await owner.graphql<{ deviceAuthorization: { state: string } }>(OPEN, { code: started.user_code })).data?.deviceAuthorization.state).toBe('pending');
    const stolen = await other.graphql(APPROVE, { code: started.user_code });
    expect(errorCode(stolen)).toBe('forbidden');

    const account = await server.app.services.accounts.signUp({ email: uniqueEmail('bearer-approver'), password: 'correct horse battery' });
    const { token } = await server.app.services.apiKeys.createForAccount(account.id, { name: 'k' });
    const viaKey = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: APPROVE, variables: { code: started.user_code } }),
    });
    // One authz rule for every web-session-only action: a bearer credential is told to sign in in a browser.
    const refused = (await viaKey.json()) as GraphQLResult<unknown>;
    expect(errorCode(refused)).toBe('sign_in_required');
    expect(refused.errors![0]!.message).toContain('needs a web session (device:approve)');
    expect((await owner.graphql<{ approveDevice: { state: string } }>(APPROVE, { code: started.user_code })).data?.approveDevice.state).toBe('approved');
  });

  it('concurrent polls after approval: exactly one gets the token', async () => {
    const started = await start('race-client');
    const browser = await member();
    expect((await browser.graphql<{ approveDevice: { state: string } }>(APPROVE, { code: started.user_code })).data?.approveDevice.state).toBe('approved');
    const results = await Promise.all(Array.from({ length: 12 }, () => poll(started.device_code)));
    const winners = results.filter((result) => result.status === 200);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.body.sessionToken).toMatch(/^svc_sess_/);
    for (const loser of results.filter((result) => result.status !== 200)) {
      expect(loser.status).toBe(400);
      expect(['invalid_grant', 'slow_down']).toContain(loser.body.code);
    }
    const { rows } = await setup.database.query(`select count(*)::int as n from session where client_name = 'race-client'`);
    expect(rows[0].n).toBe(1);
  });

  it('concurrent wrong codes cannot get past the lock', async () => {
    const browser = await member();
    const guesses = await Promise.all(Array.from({ length: 20 }, (_, i) => browser.graphql(OPEN, { code: `BBBB-${'BCDFGHJKLMNPQRSTVWXZ'[i]}BBB` })));
    const codes = guesses.map(errorCode);
    expect(codes.filter((code) => code === 'not_found').length).toBeLessThanOrEqual(5);
    expect(codes.filter((code) => code === 'rate_limited').length).toBeGreaterThanOrEqual(15);
  });

  it('signing in again does not buy more wrong codes: the lock is per account', async () => {
    const email = uniqueEmail('device-relogin');
    const first = new Browser(server.url);
    first.ip = uniqueIp();
    await first.signUp(email, 'correct horse battery');
    for (let i = 0; i < 5; i += 1) expect(errorCode(await first.graphql(OPEN, { code: 'BBBB-BBBB' }))).toBe('not_found');
    const second = new Browser(server.url);
    second.ip = uniqueIp();
    expect((await second.fetch('/api/membership/auth/login', { body: { email, password: 'correct horse battery' } })).status).toBe(200);
    expect(errorCode(await second.graphql(OPEN, { code: 'BBBB-BBBB' }))).toBe('rate_limited');
  });

  it('opening a code over GET /graphql (a cross-site navigation can send the Lax cookie) neither claims it nor counts', async () => {
    const started = await start();
    const victim = await member();
    const query = encodeURIComponent(`{ deviceAuthorization(userCode: "${started.user_code}") { state } }`);
    const viaGet = await fetch(`${server.url}/graphql?query=${query}`, { headers: { cookie: `svc_membership_session=${victim.cookie}`, accept: 'application/json' } });
    const body = (await viaGet.json()) as GraphQLResult<unknown>;
    expect(errorCode(body)).toBe('sign_in_required');
    const { rows } = await setup.database.query(`select owner_session_id from device_authorization where user_code = $1`, [started.user_code.replace('-', '')]);
    expect(rows[0].owner_session_id).toBeNull();
    // The same member on the page (POST) still owns and approves it.
    expect((await victim.graphql<{ approveDevice: { state: string } }>(APPROVE, { code: started.user_code })).data?.approveDevice.state).toBe('approved');
  });

  it('"sign out everywhere else" also revokes device-login bearer tokens', async () => {
    const started = await start('other-sessions');
    const browser = await member();
    await browser.graphql(APPROVE, { code: started.user_code });
    const token = (await poll(started.device_code)).body.sessionToken as string;
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const ended = await browser.graphql<{ revokeOtherSessions: number }>('mutation { revokeOtherSessions }');
    expect(ended.data?.revokeOtherSessions).toBe(1);
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    expect((await browser.fetch('/api/membership/me')).status).toBe(200);
  });

  it('a device token cannot list or end the member\'s sessions (GraphQL as REST), but can sign itself out', async () => {
    const started = await start('nosy-device');
    const browser = await member();
    await browser.graphql(APPROVE, { code: started.user_code });
    const token = (await poll(started.device_code)).body.sessionToken as string;
    const asDevice = (query: string) =>
      fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query }),
      }).then(async (response) => (await response.json()) as GraphQLResult<unknown>);
    expect(errorCode(await asDevice('{ sessions { id ip } }'))).toBe('sign_in_required');
    expect(errorCode(await asDevice('mutation { revokeOtherSessions }'))).toBe('sign_in_required');
    expect((await browser.fetch('/api/membership/me')).status).toBe(200);
    // GraphQL signOut with the bearer token revokes that token, as REST logout does.
    expect(((await asDevice('mutation { signOut }')) as GraphQLResult<{ signOut: boolean }>).data?.signOut).toBe(true);
    expect((await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
    expect((await browser.fetch('/api/membership/me')).status).toBe(200);
  });

  it('rejects a start without a client name', async () => {
    const response = await fetch(`${server.url}/api/membership/auth/device/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'invalid_request', error: { param: 'client' } });
  });
});

describe('device start rate limit', () => {
  it('answers 429 rate_limited with Retry-After past the per-IP limit', async () => {
    const limited = await startApp({ ...setup.config, redis: { ...(setup.config.redis as object), keyPrefix: `svc-test:limit-${Date.now()}:` } }, { config: { rateLimits: { deviceStartPerMinute: 3 } } });
    try {
      const statuses: number[] = [];
      let last: Response | null = null;
      for (let i = 0; i < 4; i += 1) {
        last = await fetch(`${limited.url}/api/membership/auth/device/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"client":"x"}' });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await last!.json()).toMatchObject({ code: 'rate_limited', stage: 'rate_limit' });
      // The RFC endpoint shares the limit and says so in its own shape.
      const rfc = await fetch(`${limited.url}/oauth/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'x' }),
      });
      expect(rfc.status).toBe(429);
      expect(Number(rfc.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(rfc.headers.get('cache-control')).toBe('no-store');
      expect(await rfc.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    } finally {
      await limited.close();
    }
  });
});
