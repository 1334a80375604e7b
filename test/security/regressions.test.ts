/**
 * Issue 15 item 9: checks that were in the code but in no test (each found by breaking one line and
 * running the suite). Each test below fails when its check is removed. Real PostgreSQL and Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxKeysPerAccount } from '../../server/modules/api-key/api-key.service.ts';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { Browser, uniqueEmail, uniqueIp } from '../helpers/browser.ts';
import { seed } from '../helpers/seed.ts';
import { CuttableProxy } from '../helpers/tcp-proxy.ts';
import { testRedisUrl } from '../helpers/env.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let upstream: ScriptedUpstream;
let app: TestApp;

beforeAll(async () => {
  mode = await realMode();
  upstream = await startScriptedUpstream();
  app = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: upstream.url, SVC_UPSTREAM_API_KEY: 'sk-upstream-secret' } });
});
afterAll(async () => {
  await app?.close();
  await upstream?.close();
  await mode?.cleanup();
});

describe('cookie-authenticated state changes need our Origin', () => {
  it('a GraphQL mutation and sign-out with the cookie but no Origin or Referer are refused', async () => {
    const member = await seed(app).member();
    const cookie = `svc_membership_session=${member.web.cookie}`;
    const mutation = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { createApiKey(name: "csrf") { token } }' }),
    });
    const body = (await mutation.json()) as { data?: { createApiKey?: unknown } | null; errors?: { extensions: { code: string } }[]; code?: string };
    expect(body.data?.createApiKey ?? null).toBeNull();
    expect(mutation.status === 403 || body.errors?.[0]?.extensions.code === 'forbidden' || body.code === 'forbidden').toBe(true);
    const logout = await fetch(`${app.url}/api/membership/auth/logout`, { method: 'POST', headers: { cookie } });
    expect(logout.status).toBe(403);
    // Still signed in: neither went through.
    expect((await member.web.fetch('/api/membership/me')).status).toBe(200);
    expect((await member.web.fetch('/api/membership/auth/api-keys').then((r) => r.json()) as { keys: unknown[] }).keys).toEqual([]);
  });
});

describe('what reaches the upstream', () => {
  it('carries SVC_UPSTREAM_API_KEY and the pass-through fields', async () => {
    const member = await seed(app).member({ planPackage: 'pro' });
    const { client } = await member.withKey();
    const seen: Record<string, unknown>[] = [];
    let authorization: string | undefined;
    upstream.server.prependListener('request', (request) => {
      if (request.url?.endsWith('/chat/completions')) authorization = request.headers.authorization;
    });
    await client.chat.completions.create({
      model: 'svc-2.1',
      messages: [{ role: 'user', content: 'pass these on' }],
      stop: ['END'],
      n: 2,
      seed: 7,
      response_format: { type: 'json_object' },
      user: 'end-user-42',
    });
    seen.push(upstream.bodies.at(-1)!);
    expect(authorization).toBe('Bearer sk-upstream-secret');
    expect(seen[0]).toMatchObject({ stop: ['END'], n: 2, seed: 7, response_format: { type: 'json_object' }, user: 'end-user-42' });
  });
});

describe('per-IP limits', () => {
  it('sign-up, sign-in, email codes and device polling are limited per address, and another address is not', async () => {
    const limited = await startApp(mode.config, {
      config: {
        server: { trustedProxies: ['127.0.0.1'] },
        auth: { throttle: { signUpPerHourPerIp: 2, signInPerMinutePerIp: 2, emailCodePerHourPerIp: 2, devicePollPerMinutePerIp: 2 } },
      },
    });
    try {
      const attempts: [string, () => Record<string, unknown>][] = [
        ['/api/membership/auth/signup', () => ({ email: uniqueEmail('ip-signup'), password: 'lantern orbit pickle saga' })],
        ['/api/membership/auth/login', () => ({ email: uniqueEmail('ip-login'), password: 'lantern orbit pickle saga' })],
        ['/api/membership/auth/email-code/start', () => ({ email: uniqueEmail('ip-code') })],
        ['/api/membership/auth/device/poll', () => ({ device_code: 'not-a-real-device-code' })],
      ];
      for (const [path, body] of attempts) {
        const browser = Object.assign(new Browser(limited.url), { ip: uniqueIp() });
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) statuses.push((await browser.fetch(path, { body: body() })).status);
        expect(statuses.slice(0, 2)).not.toContain(429);
        expect(statuses[2]).toBe(429);
        const other = Object.assign(new Browser(limited.url), { ip: uniqueIp() });
        expect((await other.fetch(path, { body: body() })).status).not.toBe(429);
      }
    } finally {
      await limited.close();
    }
  });

  it('chat is limited per address across accounts', async () => {
    // Its own key prefix: the other apps of this file have already counted requests from 127.0.0.1.
    const prefix = `${(mode.config.redis as { keyPrefix: string }).keyPrefix}chat-ip:`;
    const limited = await startApp(mode.config, { config: { rateLimits: { ipPerMinute: 3 }, redis: { keyPrefix: prefix } }, env: { SVC_UPSTREAM_URL: upstream.url } });
    try {
      const clients = await Promise.all([0, 1, 2, 3].map(async () => (await (await seed(limited).member()).withKey()).client));
      const statuses: number[] = [];
      for (const client of clients) {
        statuses.push(
          await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hi' }] }).then(
            () => 200,
            (error: { status: number }) => error.status,
          ),
        );
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('operations', () => {
  it('/readyz answers 503 naming Redis when Redis is unreachable', async () => {
    const proxy = new CuttableProxy(new URL(testRedisUrl));
    await proxy.listen();
    const cut = await startApp(mode.config, { config: { redis: { url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: `${(mode.config.redis as { keyPrefix: string }).keyPrefix}readyz:` } } });
    try {
      expect((await fetch(`${cut.url}/readyz`)).status).toBe(200);
      proxy.cut();
      const response = await fetch(`${cut.url}/readyz`);
      expect(response.status).toBe(503);
      expect(((await response.json()) as { checks: { redis: string } }).checks.redis).toMatch(/unreachable/);
    } finally {
      await cut.close();
      await proxy.close();
    }
  });

  it(`an account can hold at most ${maxKeysPerAccount} live keys`, async () => {
    const member = await seed(app).member();
    const { services } = app.app;
    await Promise.all(Array.from({ length: maxKeysPerAccount }, (_, i) => services.apiKeys.createForAccount(member.id, { name: `key ${i}` })));
    const over = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'one too many' } });
    expect(over.status).toBe(400);
    expect(((await over.json()) as { message: string }).message).toMatch(new RegExp(`at most ${maxKeysPerAccount} live keys`));
  });
});
