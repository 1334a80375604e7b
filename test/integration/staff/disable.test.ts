/**
 * Disabling an account (issue 9 item 7), on two instances sharing PostgreSQL and Redis: a key, a device
 * token and a web session that work on instance B stop at once when staff on instance A disable the
 * account, with 401 `account_disabled`, and its open graphql-ws subscriptions there are closed; every
 * sign-in path says the same; enabling restores the keys and sign-in (the ended sessions stay ended).
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { bearerGraphQL, Browser } from '../../helpers/browser.ts';
import { seed } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  setup = await realMode();
  a = await startApp(setup.config);
  b = await startApp(setup.config);
});

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await setup?.cleanup();
});

const get = (base: string, path: string, token: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });

async function expectDisabled(response: Response, what: string): Promise<void> {
  expect(response.status, what).toBe(401);
  expect(response.headers.get('x-svc-error-code'), what).toBe('account_disabled');
  const body = (await response.json()) as { code: string; stage: string; messageZh: string; error: { type: string } };
  expect(body, what).toMatchObject({ code: 'account_disabled', stage: 'auth', messageZh: '该账户已被停用，请联系客服。', error: { type: 'authentication_error' } });
}

describe('disable and enable across instances', () => {
  it('every credential stops at once on the other instance with account_disabled; enable restores keys and sign-in', async () => {
    const admin = await seed(a).staff('support');
    const member = await seed(a).member({ tag: 'disabled' });
    const key = await member.key();
    const device = await a.app.services.sessions.issueDeviceSession(member.id, 'svc-cli test', {});
    const browserOnB = member.web.at(b.url);

    // Everything works on B, and B has the credentials cached.
    expect((await get(b.url, '/v1/models', key)).status).toBe(200);
    expect((await get(b.url, '/v1/models', device.token)).status).toBe(200);
    expect((await browserOnB.fetch('/api/membership/me')).status).toBe(200);
    expect((await browserOnB.graphql<{ apiKeys: unknown[] }>('{ apiKeys { id } }')).data?.apiKeys).toHaveLength(1);

    const disabled = await admin.web.graphql<{ disableAccount: { disabled: boolean; disabledAt: string } }>(
      'mutation($id: ID!, $reason: String!) { disableAccount(id: $id, reason: $reason) { disabled disabledAt } }',
      { id: member.id, reason: 'card testing from this account' },
    );
    expect(disabled.data?.disableAccount.disabled).toBe(true);

    // At once on B: bearer key, device token, chat, the cookie where sign-in is needed.
    await expectDisabled(await get(b.url, '/v1/models', key), 'key on /v1/models');
    await expectDisabled(await get(b.url, '/v1/models', device.token), 'device token');
    const chat = await fetch(`${b.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await expectDisabled(chat, 'chat');
    await expectDisabled(await browserOnB.fetch('/api/membership/me'), 'cookie on /me');
    await expectDisabled(await browserOnB.fetch('/api/membership/auth/api-keys'), 'cookie on api-keys');
    const overGraphQL = await browserOnB.graphql('{ apiKeys { id } }');
    expect(overGraphQL.errors?.[0]?.extensions).toMatchObject({ code: 'account_disabled', status: 401 });
    // Where sign-in is optional the browser is simply signed out.
    expect((await browserOnB.graphql<{ me: unknown }>('{ me { id } }')).data).toEqual({ me: null });
    expect((await bearerGraphQL(b.url, key, '{ me { id } }')).status).toBe(401);

    // Its sessions are ended in the database, not just refused.
    const live = await setup.database.query('select count(*)::int as n from session where account_id = $1 and revoked_at is null', [member.id]);
    expect(live.rows[0].n).toBe(0);

    // Sign-in: password and email code say account_disabled (after the right secret only).
    const login = new Browser(b.url);
    const wrong = await login.fetch('/api/membership/auth/login', { body: { email: member.email, password: 'not the password' } });
    expect(await wrong.json()).toMatchObject({ code: 'invalid_credentials' });
    await expectDisabled(await login.fetch('/api/membership/auth/login', { body: { email: member.email, password: member.password } }), 'password sign-in');
    expect(login.cookie).toBeNull();
    expect((await login.fetch('/api/membership/auth/email-code/start', { body: { email: member.email } })).status).toBe(200);
    const code = /\b(\d{6})\b/.exec(b.app.services.mailer.lastTo(member.email)!.text)![1]!;
    await expectDisabled(await login.fetch('/api/membership/auth/email-code/verify', { body: { email: member.email, code } }), 'email code');
    expect(login.cookie).toBeNull();

    // Enable on A (REST): the key works on B at once; the ended sessions stay ended; sign-in works again.
    const enabled = await admin.web.fetch(`/api/membership/staff/accounts/${member.id}/enable`, { body: {} });
    expect(await enabled.json()).toMatchObject({ ok: true, account: { id: member.id, disabledAt: null } });
    const restored = await get(b.url, '/v1/models', key);
    expect(restored.status, await restored.clone().text()).toBe(200);
    const ended = await get(b.url, '/v1/models', device.token);
    expect(ended.status).toBe(401);
    expect(await ended.json()).toMatchObject({ code: 'sign_in_required' });
    expect(await (await browserOnB.fetch('/api/membership/me')).json()).toMatchObject({ code: 'sign_in_required' });
    const again = await login.fetch('/api/membership/auth/login', { body: { email: member.email, password: member.password } });
    expect(again.status).toBe(200);
    expect((await login.fetch('/api/membership/me')).status).toBe(200);
  });

  it('open graphql-ws subscriptions on the other instance are closed (4403) at once, by key or by cookie', async () => {
    const admin = await seed(a).staff('support');
    const member = await seed(a).member({ tag: 'watching' });
    const key = await member.key();
    const url = `${b.url.replace('http', 'ws')}/graphql`;
    const watch = (client: ReturnType<typeof createClient>) =>
      new Promise<void>((resolve, reject) => {
        client.subscribe({ query: 'subscription { usageUpdated { packageId } }' }, { next: () => resolve(), error: reject, complete: () => undefined });
      });
    const closes: Record<string, number> = {};
    const byKey = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${key}` }, on: { closed: (event) => (closes.key = (event as { code: number }).code) } });
    const headers = { cookie: `svc_membership_session=${member.web.cookie}`, origin: b.url };
    const CookieSocket = class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers });
      }
    };
    const byCookie = createClient({ url, webSocketImpl: CookieSocket, retryAttempts: 0, on: { closed: (event) => (closes.cookie = (event as { code: number }).code) } });
    try {
      // Both are live on B: each has had its first usage update.
      await Promise.all([watch(byKey), watch(byCookie)]);
      await admin.web.graphql('mutation($id: ID!) { disableAccount(id: $id, reason: "abuse") { id } }', { id: member.id });
      await expect.poll(() => closes, { timeout: 2000 }).toEqual({ key: 4403, cookie: 4403 });
      await expect.poll(() => b.app.services.usage.events.watching(member.id)).toBe(0);
    } finally {
      await Promise.all([byKey.dispose(), byCookie.dispose()]);
    }
  });

  it('staff end every session of an account on every instance (REST), keys untouched', async () => {
    const support = await seed(a).staff('support');
    const member = await seed(a).member({ tag: 'ended' });
    const key = await member.key();
    const device = await a.app.services.sessions.issueDeviceSession(member.id, 'svc-cli test', {});
    const browserOnB = member.web.at(b.url);
    expect((await browserOnB.fetch('/api/membership/me')).status).toBe(200);
    expect((await get(b.url, '/v1/models', device.token)).status).toBe(200);

    const response = await support.web.fetch(`/api/membership/staff/accounts/${member.id}/sessions/end`, { body: { reason: 'reported a stolen laptop' } });
    expect(await response.json()).toEqual({ ok: true, endedSessions: 2 });
    expect((await browserOnB.fetch('/api/membership/me')).status).toBe(401);
    expect((await get(b.url, '/v1/models', device.token)).status).toBe(401);
    expect((await get(b.url, '/v1/models', key)).status).toBe(200);
    const missingReason = await support.web.fetch(`/api/membership/staff/accounts/${member.id}/sessions/end`, { body: {} });
    expect(missingReason.status).toBe(400);
    expect(await missingReason.json()).toMatchObject({ code: 'invalid_request', error: { param: 'reason' } });
  });

  it('unknown and malformed account ids are a 404 not_found, never a 500', async () => {
    const support = await seed(a).staff('support');
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const response = await support.web.fetch(`/api/membership/staff/accounts/${id}/disable`, { body: { reason: 'x' } });
      expect(response.status, id).toBe(404);
      expect(await response.json(), id).toMatchObject({ code: 'not_found', error: { param: 'accountId' } });
    }
  });
});
