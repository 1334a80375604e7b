/**
 * Operational endpoints and guarantees: health, readiness (including an unreachable database),
 * Prometheus metrics, logs that carry the request id and never a credential, and embedded data that
 * survives a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account } from '../../../server/modules/account/account.entity.ts';
import { embeddedMode, realMode, startApp, type TestApp } from '../../helpers/app.ts';
import type { TestDatabase } from '../../helpers/database.ts';

describe('operations (real PostgreSQL + Redis)', () => {
  let testApp: TestApp;
  let database: TestDatabase;
  let cleanup: () => Promise<void>;
  const logLines: string[] = [];

  beforeAll(async () => {
    const setup = await realMode();
    database = setup.database;
    cleanup = setup.cleanup;
    testApp = await startApp(setup.config, { logLines });
  });
  afterAll(async () => {
    await testApp?.close();
    await cleanup?.();
  });

  it('/healthz and /readyz answer', async () => {
    expect(await (await fetch(`${testApp.url}/healthz`)).json()).toEqual({ ok: true });
    const ready = await fetch(`${testApp.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ok: true, checks: { database: 'ok', redis: 'ok' } });
  });

  it('/metrics counts requests by route pattern and status', async () => {
    await fetch(`${testApp.url}/api/membership/plans`);
    await fetch(`${testApp.url}/api/membership/missing`);
    const text = await (await fetch(`${testApp.url}/metrics`)).text();
    expect(text).toMatch(/svc_http_requests_total\{method="GET",route="\/api\/membership\/plans",status="200"\} \d+/);
    expect(text).toMatch(/svc_http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/);
    expect(text).toMatch(/svc_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/membership\/plans",status="200"\} \d+/);
  });

  it('/metrics samples the event-loop lag every 10 ms: its gauges include the tick, so a longer one would read as lag', async () => {
    // prom-client's lag gauges are the time between its histogram's ticks; each scrape resets the histogram.
    const minimum = async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      const text = await (await fetch(`${testApp.url}/metrics`)).text();
      return Number(/^nodejs_eventloop_lag_min_seconds (\S+)$/m.exec(text)?.[1]);
    };
    await minimum();
    const seconds = await minimum();
    expect(seconds).toBeGreaterThan(0.005);
    expect(seconds).toBeLessThan(0.05);
  });

  it('logs are JSON with the request id and never an Authorization header or cookie', async () => {
    const secret = 'svc_live_ThisMustNeverBeLogged0123456789';
    const id = 'mbr_LogCorrelationProbe_000001';
    await fetch(`${testApp.url}/api/membership/plans`, {
      headers: { authorization: `Bearer ${secret}`, cookie: `svc_membership_session=${secret}`, 'x-svc-request-id': id },
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const mine = logLines.filter((line) => line.includes(id)).map((line) => JSON.parse(line));
    expect(mine.length).toBeGreaterThanOrEqual(1);
    for (const entry of mine) expect(entry.requestId).toBe(id);
    // One line per request, with what happened.
    expect(mine.find((entry) => entry.msg === 'request completed')).toMatchObject({
      req: { method: 'GET', url: '/api/membership/plans' },
      res: { statusCode: 200 },
    });
    expect(logLines.join('\n')).not.toContain(secret);
  });

  it('logs the path of a request, not its query string (one-time codes travel there)', async () => {
    const id = 'mbr_LogQueryProbe_0000000001';
    await fetch(`${testApp.url}/api/membership/plans?code=one-time-secret-code&state=abc`, { headers: { 'x-svc-request-id': id } });
    await expect.poll(() => logLines.filter((line) => line.includes(id)).length).toBeGreaterThanOrEqual(1);
    const [entry] = logLines.filter((line) => line.includes(id)).map((line) => JSON.parse(line) as { req: { url: string } });
    expect(entry!.req.url).toBe('/api/membership/plans?…');
    expect(logLines.join('\n')).not.toContain('one-time-secret-code');
  });

  it('/readyz reports an unreachable database', async () => {
    // Cut the app off: refuse new connections to its database and end the open ones.
    await database.admin(`alter database "${database.name}" allow_connections false`);
    await database.admin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${database.name}'`);
    try {
      const response = await fetch(`${testApp.url}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { ok: boolean; checks: { database: string; redis: string } };
      expect(body.ok).toBe(false);
      expect(body.checks.database).toMatch(/^unreachable: /);
      expect(body.checks.redis).toBe('ok');
    } finally {
      await database.admin(`alter database "${database.name}" allow_connections true`);
    }
    // And it recovers once the database is back.
    await expect.poll(async () => (await fetch(`${testApp.url}/readyz`)).status, { timeout: 10_000 }).toBe(200);
  });
});

describe('embedded mode (PGlite + in-process)', () => {
  it('data written survives a restart, and /readyz says single-instance', async () => {
    const setup = embeddedMode();
    try {
      const first = await startApp(setup.config);
      const ready = (await (await fetch(`${first.url}/readyz`)).json()) as { checks: { redis: string } };
      expect(ready.checks.redis).toBe('in-process');
      const em = first.app.services.db.orm.em.fork();
      em.create(Account, { email: 'persist@example.com', planPackage: 'pro' });
      await em.flush();
      await first.close();

      const second = await startApp(setup.config);
      try {
        const found = await second.app.services.db.orm.em.fork().findOne(Account, { email: 'persist@example.com' });
        expect(found?.planPackage).toBe('pro');
        expect(found?.createdAt).toBeInstanceOf(Date);
      } finally {
        await second.close();
      }
    } finally {
      await setup.cleanup();
    }
  });
});

describe('shutdown', () => {
  it('close() lets a request in flight finish, then cuts one that never ends and says so', async () => {
    const setup = embeddedMode();
    const logLines: string[] = [];
    const testApp = await startApp(setup.config, {
      logLines,
      drainMs: 500,
      beforeListen: (app) => {
        app.get('/api/membership/test-slow', async () => new Promise((resolve) => setTimeout(() => resolve({ ok: true }), 200)));
        app.get('/api/membership/test-hangs', () => new Promise(() => undefined));
      },
    });
    try {
      const slow = fetch(`${testApp.url}/api/membership/test-slow`);
      const hung = fetch(`${testApp.url}/api/membership/test-hangs`).then(
        () => 'answered',
        () => 'cut',
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      await testApp.close();
      expect(Date.now() - started).toBeGreaterThanOrEqual(450);
      expect(Date.now() - started).toBeLessThan(5000);
      expect((await slow).status).toBe(200);
      expect(await hung).toBe('cut');
      expect(logLines.some((line) => line.includes('shutdown: requests still open after 500 ms'))).toBe(true);
    } finally {
      await setup.cleanup();
    }
  });
});
