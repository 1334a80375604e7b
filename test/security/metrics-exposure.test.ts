/**
 * Issue 46 item 11: `/metrics` (every route, status, latency and the process's memory) answered anyone on
 * every interface. Now: by default only a scraper on this machine — a loopback TCP peer that is not a
 * proxy — gets it; `metrics.token` lets a bearer in from anywhere; `metrics.port` serves it on a listener of
 * its own and the main port has none. The non-loopback peer is real: the app listens on every interface
 * and the test connects to this machine's own network address, so the server sees that address as the peer.
 */
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, realMode, startApp, type TestApp } from '../helpers/app.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
const apps: TestApp[] = [];
const token = 'metrics-token-0123456789abcdef0123456789abcdef';

beforeAll(async () => {
  mode = await realMode();
});
// One app at a time: instances of one database share its background jobs' locks.
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
afterAll(async () => {
  await mode?.cleanup();
});

async function start(config: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<TestApp> {
  const app = await startApp(mode.config, { config, env, host: '0.0.0.0' });
  apps.push(app);
  return app;
}

async function stop(app: TestApp): Promise<void> {
  apps.splice(apps.indexOf(app), 1);
  await app.close();
}

/** This machine's address on a real network interface (not loopback): connecting to it, the peer is not loopback either. */
const networkAddress = Object.values(networkInterfaces())
  .flat()
  .find((address) => address && !address.internal && address.family === 'IPv4')?.address;

/** The app's URL on the network address instead of 127.0.0.1. */
const fromNetwork = (app: TestApp) => app.url.replace('127.0.0.1', networkAddress!);

const scrape = (base: string, headers: Record<string, string> = {}) => fetch(`${base}/metrics`, { headers });

async function expectMetrics(response: Response): Promise<void> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  expect(await response.text()).toMatch(/^# TYPE svc_http_requests_total counter$/m);
}

async function expectRefused(response: Response, status: number, code: string): Promise<void> {
  const body = await response.text();
  expect(response.status, body).toBe(status);
  expect(body).not.toMatch(/svc_http_requests_total|nodejs_/);
  expect((JSON.parse(body) as { code: string }).code).toBe(code);
}

describe('/metrics by default: this machine only', () => {
  it.skipIf(!networkAddress)('a client on another address gets 404; a loopback client gets the metrics', async () => {
    const app = await start();
    await fetch(`${app.url}/healthz`);
    await expectRefused(await scrape(fromNetwork(app)), 404, 'not_found');
    // The same server answers that address (it is not a dead route): the health check works there.
    expect((await fetch(`${fromNetwork(app)}/healthz`)).status).toBe(200);
    await expectMetrics(await scrape(app.url));
  });

  it('a loopback peer relaying someone (a forwarding header, or a configured trusted proxy) is not this machine', async () => {
    const direct = await start();
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      await expectRefused(await scrape(direct.url, { [header]: header === 'forwarded' ? 'for=127.0.0.1' : '127.0.0.1' }), 404, 'not_found');
    }
    const behindProxy = await start({ server: { trustedProxies: ['127.0.0.1'] } });
    await expectRefused(await scrape(behindProxy.url), 404, 'not_found');
  });
});

describe('metrics.token', () => {
  it('every scrape needs the bearer, compared whole; with it, any address gets the metrics', async () => {
    const app = await start({ metrics: { token: 'env:SVC_TEST_METRICS_TOKEN' } }, { SVC_TEST_METRICS_TOKEN: token });
    const missing = await scrape(app.url);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="svc-metrics"');
    await expectRefused(missing, 401, 'sign_in_required');
    for (const wrong of [token.slice(0, -1), `${token}0`, token.toUpperCase(), '']) {
      await expectRefused(await scrape(app.url, { authorization: `Bearer ${wrong}` }), 401, 'sign_in_required');
    }
    await expectRefused(await scrape(app.url, { authorization: `Basic ${token}` }), 401, 'sign_in_required');
    await expectMetrics(await scrape(app.url, { authorization: `Bearer ${token}` }));
    if (networkAddress) {
      await expectRefused(await scrape(fromNetwork(app)), 401, 'sign_in_required');
      await expectMetrics(await scrape(fromNetwork(app), { authorization: `Bearer ${token}` }));
    }
  });
});

describe('metrics.port', () => {
  it('serves /metrics there only, counting the main port\'s requests; the main port has no /metrics', async () => {
    const port = await freePort();
    const app = await start({ metrics: { port } });
    await fetch(`${app.url}/api/membership/plans`);
    await expectRefused(await scrape(app.url), 404, 'not_found');
    const own = `http://127.0.0.1:${port}`;
    const response = await scrape(own);
    const text = await response.clone().text();
    await expectMetrics(response);
    expect(text).toMatch(/svc_http_requests_total\{method="GET",route="\/api\/membership\/plans",status="200"\} 1/);
    expect(text).toMatch(/svc_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    await expectRefused(await fetch(`${own}/healthz`), 404, 'not_found');
    await expectRefused(await fetch(`${own}/metrics`, { method: 'POST' }), 405, 'method_not_allowed');
    // Bound to metrics.host (127.0.0.1 by default): nothing listens on that port on the network address.
    if (networkAddress) await expect(fetch(`http://${networkAddress}:${port}/metrics`)).rejects.toThrow();
    await stop(app);
    await expect(fetch(`${own}/metrics`)).rejects.toThrow();
  });

  it('with a token too, the metrics port asks for it', async () => {
    const port = await freePort();
    await start({ metrics: { port, token: 'env:SVC_TEST_METRICS_TOKEN' } }, { SVC_TEST_METRICS_TOKEN: token });
    await expectRefused(await scrape(`http://127.0.0.1:${port}`), 401, 'sign_in_required');
    await expectMetrics(await scrape(`http://127.0.0.1:${port}`, { authorization: `Bearer ${token}` }));
  });

  it('a metrics port already taken stops the start', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await expect(startApp(mode.config, { config: { metrics: { port } } })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
