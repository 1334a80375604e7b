/**
 * A newcomer's first chat, with and without a model server (issue 49 item 1):
 * - nothing configured: 503 `upstream_not_configured` saying which env var and config key to set, in English
 *   and in Chinese, with no `Retry-After` and `x-should-retry: false` (retrying cannot help), nothing billed;
 * - a model server running on this machine is found at start (`upstreamDiscovery`), used, and named in the
 *   log; the product ids it does not serve go to it as its first listed model;
 * - staff see `upstreamStatus` (configured? answering? which?), and `upstreamStatusChanged` pushes the moment
 *   a model server starts answering.
 */
import { createServer, type Server } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { cookieClient, nextOf } from './harness.ts';

const STATUS = 'upstreamStatus { configured source answering discoveryPorts upstreams { label baseUrl answering problem httpStatus } }';

let mode: Awaited<ReturnType<typeof realMode>>;

beforeAll(async () => {
  mode = await realMode();
});

afterAll(async () => {
  await mode?.cleanup();
});

/** A port nothing listens on (taken from the OS and let go). */
const deadPort = () => freePort();

describe('no model server configured', () => {
  let app: TestApp;
  const logLines: string[] = [];

  beforeAll(async () => {
    const nobody = await deadPort();
    app = await startApp(mode.config, { logLines, config: { server: { logLevel: 'debug' }, upstreamDiscovery: { enabled: true, ports: [nobody], timeoutMs: 300 } } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('chat answers 503 upstream_not_configured naming SVC_UPSTREAM_URL and the config key, in both languages, without Retry-After', async () => {
    const member = await seed(app).member();
    const key = await member.key();
    for (const [model, configured] of [
      ['svc-2.1', 'svc-2.1'],
      ['auto', 'svc-2.1-fast'],
    ] as const) {
      for (const stream of [false, true]) {
        const response = await fetch(`${app.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Hi' }] }),
        });
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBeNull();
        expect(response.headers.get('x-should-retry')).toBe('false');
        expect(response.headers.get('x-svc-error-code')).toBe('upstream_not_configured');
        const body = (await response.json()) as { code: string; stage: string; actions: string[]; message: string; messageZh: string; debug: { productModel: string } };
        expect(body).toMatchObject({ code: 'upstream_not_configured', stage: 'routing', actions: [], debug: { productModel: model } });
        for (const text of [body.message, body.messageZh]) {
          expect(text).toContain('SVC_UPSTREAM_URL');
          expect(text).toContain(`models.${configured}.deployments`);
          expect(text).toContain(model);
        }
        expect(body.message).toContain('retrying will not help');
        expect(body.messageZh).toContain('重试也无济于事');
        expect(body.messageZh).not.toBe(body.message);
      }
    }
    const { rows } = await mode.database.query('select count(*)::int as n from usage_ledger where account_id = $1', [member.id]);
    expect(rows[0].n).toBe(0);
  });

  it('the official SDK, left to retry as it does by default, asks once: the answer says a retry cannot help', async () => {
    const member = await seed(app).member();
    const client = new OpenAI({ apiKey: await member.key(), baseURL: `${app.url}/v1` });
    const asked = () => logLines.filter((line) => line.includes('"url":"/v1/chat/completions"') && line.includes('"statusCode":503')).length;
    const before = asked();
    const error = await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'Hi' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_not_configured');
    await expect.poll(asked).toBe(before + 1);
  });

  it('the log says no model server answered, where svc looked, and what to set', () => {
    const line = logLines.find((entry) => entry.includes('No model server is configured, and none answered'));
    expect(line).toBeDefined();
    expect(line).toContain('"level":40');
    expect(line).toContain('SVC_UPSTREAM_URL');
    expect(line).toContain('models.<id>.deployments');
  });

  it('staff see it as upstreamStatus: not configured, with the ports looked at; members are refused', async () => {
    const support = await seed(app).staff('support');
    const seen = await support.web.graphql<{ upstreamStatus: unknown }>(`{ ${STATUS} }`);
    expect(seen.errors).toBeUndefined();
    expect(seen.data?.upstreamStatus).toEqual({ configured: false, source: 'none', answering: false, discoveryPorts: app.config.upstreamDiscovery.ports, upstreams: [] });
    const member = await seed(app).member();
    const refused = await member.web.graphql(`{ ${STATUS} }`);
    expect(refused.errors?.[0]?.extensions?.code).toBe('forbidden');
  });
});

describe('a model server on this machine, found at start', () => {
  let upstream: ScriptedUpstream;
  let app: TestApp;
  const logLines: string[] = [];

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    const port = Number(new URL(upstream.url).port);
    app = await startApp(mode.config, { logLines, config: { upstreamDiscovery: { enabled: true, ports: [await deadPort(), port] } } });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('is used for chat, under the model name it lists, and the log says which server and which name', async () => {
    const member = await seed(app).member();
    const { client } = await member.withKey();
    const reply = await client.chat.completions.create({ model: 'svc-2.1', messages: [{ role: 'user', content: 'Hi' }] });
    // The client sees the product id; the local server was asked for the one model it serves.
    expect(reply.model).toBe('svc-2.1');
    expect(upstream.bodies.at(-1)?.model).toBe('scripted');
    const port = new URL(upstream.url).port;
    const line = logLines.find((entry) => entry.includes('No model server was configured: using the one that answered'));
    expect(line).toContain(`http://127.0.0.1:${port}/v1`);
    expect(line).toContain('are sent to it as scripted');
    expect(line).toContain('upstreamDiscovery.enabled: false');
    expect(app.app.services.config.defaultUpstream).toMatchObject({ baseUrl: `http://127.0.0.1:${port}/v1`, source: 'discovered' });
  });

  it('staff see it as discovered and answering', async () => {
    const admin = await seed(app).staff('admin');
    const seen = await admin.web.graphql<{ upstreamStatus: { configured: boolean; source: string; answering: boolean; upstreams: unknown[] } }>(`{ ${STATUS} }`);
    expect(seen.data?.upstreamStatus).toMatchObject({ configured: true, source: 'discovered', answering: true });
    expect(seen.data?.upstreamStatus.upstreams).toEqual([{ label: 'default', baseUrl: upstream.url, answering: true, problem: null, httpStatus: 200 }]);
  });
});

describe('discovery stays out of the way', () => {
  it('skips a server on the port that does not list models as an OpenAI-compatible server does', async () => {
    const notOpenAi = await listening((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>a web app</html>'));
    const port = (notOpenAi.address() as { port: number }).port;
    try {
      const skipping = await startApp(mode.config, { config: { upstreamDiscovery: { enabled: true, ports: [port] } } });
      expect(skipping.app.services.config.defaultUpstream).toBeNull();
      await skipping.close();
    } finally {
      await new Promise((resolve) => notOpenAi.close(resolve));
    }
  });
});

describe('what counts as answering', () => {
  it('a 404 to GET /models is a server that is up; a 401 (our key refused) or a 500 is not', async () => {
    const statuses: Record<string, number> = { '/a/models': 404, '/b/models': 401, '/c/models': 500 };
    const server = await listening((request, response) => response.writeHead(statuses[request.url ?? ''] ?? 200).end());
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const model = (upstream: string) => ({ tier: 'fast', inputPrice: 1, outputPrice: 1, deployments: [{ upstream, model: 'm' }] });
    const app = await startApp(mode.config, {
      config: {
        // A password in the URL is never shown to staff (nor used: the gateway takes origin and path only).
        upstreams: { a: { baseUrl: `${base.replace('//', '//user:secret@')}/a?key=hidden`, label: 'a' }, b: { baseUrl: `${base}/b`, label: 'b' }, c: { baseUrl: `${base}/c`, label: 'c' } },
        models: { 'svc-a': model('a'), 'svc-b': model('b'), 'svc-c': model('c') },
      },
    });
    try {
      const support = await seed(app).staff('support');
      const seen = await support.web.graphql<{ upstreamStatus: { source: string; answering: boolean; upstreams: unknown[] } }>(`{ ${STATUS} }`);
      expect(seen.data?.upstreamStatus).toMatchObject({ source: 'config', answering: false });
      expect(seen.data?.upstreamStatus.upstreams).toEqual([
        { label: 'a', baseUrl: `${base}/a`, answering: true, problem: null, httpStatus: 404 },
        { label: 'b', baseUrl: `${base}/b`, answering: false, problem: 'http_status', httpStatus: 401 },
        { label: 'c', baseUrl: `${base}/c`, answering: false, problem: 'http_status', httpStatus: 500 },
      ]);
    } finally {
      await app.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('upstreamStatusChanged', () => {
  it('pushes to staff the moment the configured model server starts answering', async () => {
    const port = await deadPort();
    const app = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: `http://127.0.0.1:${port}/v1` }, config: { gateway: { upstreamCheckSeconds: 0.2 } } });
    const support = await seed(app).staff('support');
    const client = cookieClient(app, support);
    let upstream: ScriptedUpstream | null = null;
    type Status = { upstreamStatusChanged: { configured: boolean; source: string; answering: boolean; upstreams: { problem: string | null }[] } };
    const events = client.iterate<Status>({ query: `subscription { upstreamStatusChanged { configured source answering upstreams { problem } } }` })[Symbol.asyncIterator]();
    try {
      const first = await nextOf(events);
      expect(first.upstreamStatusChanged).toEqual({ configured: true, source: 'env', answering: false, upstreams: [{ problem: 'refused' }] });
      upstream = await startScriptedUpstream({ port });
      const second = await nextOf(events);
      expect(second.upstreamStatusChanged).toEqual({ configured: true, source: 'env', answering: true, upstreams: [{ problem: null }] });
    } finally {
      await events.return?.();
      await client.dispose();
      await upstream?.close();
      await app.close();
    }
  });
});

function listening(handler: Parameters<typeof createServer>[1]): Promise<Server> {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
