/**
 * Issue 15 item 3: a revocation must reach every instance or fail as a whole — never "done in the database,
 * not in the caches". Instance A reaches Redis through a TCP proxy this test controls; B reaches it directly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realMode, startApp, type TestApp } from '../helpers/app.ts';
import { testRedisUrl } from '../helpers/env.ts';
import { seed } from '../helpers/seed.ts';
import { CuttableProxy } from '../helpers/tcp-proxy.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let proxy: CuttableProxy;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  mode = await realMode();
  proxy = new CuttableProxy(new URL(testRedisUrl));
  await proxy.listen();
  const viaProxy = { redis: { ...(mode.config.redis as object), url: `redis://127.0.0.1:${proxy.port}` } };
  a = await startApp(mode.config, { config: viaProxy });
  b = await startApp(mode.config);
});
afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await proxy?.close();
  await mode?.cleanup();
});

const models = (app: TestApp, key: string) => fetch(`${app.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

describe('revocation when the revoking instance cannot reach Redis', () => {
  it('reaches the other instance through the outbox within about a second', async () => {
    const member = await seed(a).member();
    const { key, keyId } = await member.withKey();
    expect(await models(b, key)).toBe(200); // cached on B
    proxy.cut();
    try {
      // The service path (Redis is gone between the request's checks and the publish).
      const principal = await a.app.services.identity.authenticateWebSession((member.web.cookie)!).then((r) => r.principal!);
      await a.app.services.apiKeys.revoke(principal, keyId);
      const started = Date.now();
      await expect.poll(() => models(b, key), { timeout: 5000, interval: 100 }).toBe(401);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      proxy.restore();
    }
  });

  it('over HTTP, with Redis gone the revoking instance answers 503 and changes nothing', async () => {
    const member = await seed(a).member();
    const { key, keyId } = await member.withKey();
    expect(await models(b, key)).toBe(200);
    proxy.cut();
    try {
      const response = await member.web.at(a.url).fetch(`/api/membership/auth/api-keys/${keyId}`, { method: 'DELETE' });
      expect(response.status).toBe(503);
      expect(((await response.json()) as { code: string }).code).toBe('service_unavailable');
      // Not half-done: the key still works everywhere, as the 503 said.
      expect(await models(b, key)).toBe(200);
    } finally {
      proxy.restore();
    }
  });
});
