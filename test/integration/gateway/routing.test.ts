/**
 * Deployments with ordered fallbacks: a failing first deployment falls back before the first byte;
 * an explicit upstream model name is sent; the deployment label is what errors show. And admission fails
 * closed when PostgreSQL goes away (the app reaches it through a TCP proxy the test cuts).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { createMember, relaxedLimits, startHarness, type Harness } from './harness.ts';

let h: Harness;
let broken: ScriptedUpstream;

beforeAll(async () => {
  broken = await startScriptedUpstream({ defaults: { status: 500 } });
  h = await startHarness({
    config: {
      upstreams: {
        primary: { baseUrl: broken.url, label: 'gpu-a' },
        secondary: { baseUrl: 'http://127.0.0.1:1/v1', label: 'gpu-b' },
      },
      models: {
        'svc-2.1-pro': { tier: 'premium', inputPrice: 0.435, outputPrice: 0.87, deployments: [{ upstream: 'primary', model: 'qwen3-235b' }] },
      },
    },
  });
});
afterAll(async () => {
  await h?.close();
  await broken?.close();
});

describe('deployments', () => {
  it('falls back to the next deployment before the first byte', async () => {
    const { startApp: start } = await import('../../helpers/app.ts');
    const app = await start(h.mode.config, {
      config: {
        ...relaxedLimits,
        upstreams: { primary: { baseUrl: broken.url, label: 'gpu-a' }, secondary: { baseUrl: h.upstream.url, label: 'gpu-b' } },
        models: {
          'svc-2.1-pro': {
            tier: 'premium',
            inputPrice: 0.435,
            outputPrice: 0.87,
            deployments: [
              { upstream: 'primary', model: 'qwen3-235b' },
              { upstream: 'secondary', model: 'qwen3-235b-fallback' },
            ],
          },
        },
      },
    });
    try {
      const member = await createMember(app, { planPackage: 'pro' });
      const client = new OpenAI({ apiKey: member.key, baseURL: `${app.url}/v1`, maxRetries: 0 });
      const before = { broken: broken.stats.requests, good: h.upstream.stats.requests };
      const completion = await client.chat.completions.create({ model: 'svc-2.1-pro', messages: [{ role: 'user', content: 'hi' }] });
      expect(completion.model).toBe('svc-2.1-pro');
      expect(broken.stats.requests - before.broken).toBe(1);
      expect(h.upstream.stats.requests - before.good).toBe(1);
      expect(h.upstream.bodies.at(-1)!.model).toBe('qwen3-235b-fallback');
    } finally {
      await app.close();
    }
  });

  it('when every deployment fails, the error names the last deployment by label only', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const raw = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1-pro', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(raw.status).toBe(502);
    const body = (await raw.json()) as { debug: Record<string, unknown> };
    expect(body.debug).toMatchObject({ productModel: 'svc-2.1-pro', upstreamHost: 'gpu-a', upstreamStatus: 500, quotaRefunded: true });
    expect(JSON.stringify(body)).not.toContain('127.0.0.1');
  });
});

describe('database unreachable', () => {
  let proxy: Server;
  let app: TestApp;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    const target = new URL(h.database.url);
    proxy = createServer((client) => {
      const server = connect(Number(target.port || 5432), target.hostname);
      sockets.add(client).add(server);
      client.pipe(server).pipe(client);
      const close = () => {
        client.destroy();
        server.destroy();
      };
      client.on('error', close).on('close', close);
      server.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as { port: number };
    const viaProxy = new URL(h.database.url);
    viaProxy.host = `127.0.0.1:${port}`;
    app = await startApp(h.mode.config, { config: { ...relaxedLimits, database: { url: viaProxy.toString() } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
  });
  afterAll(async () => {
    await app?.close().catch(() => undefined);
    proxy?.close();
  });

  it('answers 503 service_unavailable and never calls the upstream', async () => {
    const member = await createMember(app);
    const uncached = await createMember(app); // its key was never used: not in the auth cache
    await member.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] });
    const before = h.upstream.stats.requests;
    proxy.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => setTimeout(resolve, 2500)); // the health probe runs every second
    const error = await member.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('service_unavailable');
    const unauthenticated = await uncached.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect((unauthenticated as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((unauthenticated as InstanceType<typeof OpenAI.APIError>).code).toBe('service_unavailable');
    expect(h.upstream.stats.requests).toBe(before);
  });
});
