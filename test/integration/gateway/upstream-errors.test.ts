/**
 * An upstream's HTTP errors as clients read them (CONFORMANCE "Upstream errors"): a 4xx that is the
 * request's fault comes back as the same 4xx with the model server's own reason, refunded and not to be
 * retried; 401/403 are svc's misconfiguration (502, the upstream's text never shown); 429 keeps its
 * Retry-After. A rejection stops the fallback; a 404 at one deployment tries the next.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;
let first: ScriptedUpstream;

beforeAll(async () => {
  first = await startScriptedUpstream();
  h = await startHarness({
    config: {
      upstreams: { first: { baseUrl: first.url, label: 'gpu-a' } },
    },
  });
  m = await h.member();
});
afterAll(async () => {
  await h?.close();
  await first?.close();
});

const contextTooLong = "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).";

function scripted(script: Record<string, unknown>) {
  return [{ role: 'user' as const, content: `#script ${JSON.stringify(script)}` }];
}

async function raw(key: string, body: Record<string, unknown>, url = `${h.app.url}/v1/chat/completions`) {
  const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> };
}

async function caught(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe('an upstream 4xx that is the request fault', () => {
  it('400 comes back as 400 upstream_rejected with the model server reason, refunded, not retried', async () => {
    const member = await h.member();
    const retrying = new OpenAI({ apiKey: member.key, baseURL: `${h.app.url}/v1`, maxRetries: 2 });
    const before = h.upstream.stats.requests;
    const error = await caught(retrying.chat.completions.create({ model: 'auto', messages: scripted({ status: 400, errorStyle: 'vllm', errorMessage: contextTooLong }) }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe('upstream_rejected');
    expect(error.message).toContain('maximum context length is 4096 tokens');
    expect(error.message).toContain('Nothing was billed');
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(h.upstream.stats.requests - before).toBe(1);
    const { body, headers } = await raw(member.key, { model: 'auto', messages: scripted({ status: 400, errorMessage: contextTooLong }) });
    expect(headers.get('x-svc-error-stage')).toBe('upstream');
    expect(body).toMatchObject({ code: 'upstream_rejected', stage: 'upstream', actions: ['fix_request'], error: { type: 'invalid_request_error' } });
    expect(body.debug).toMatchObject({ upstreamStatus: 400, upstreamHost: 'default', quotaRefunded: true });
    const rows = await ledgerRows(h.database, member.accountId, 2);
    for (const row of rows) expect(row).toMatchObject({ status: 'refunded', cost_micros: '0' });
  });

  it('404, 413 and 422 keep their status; each error body shape gives its reason', async () => {
    const notFound = await caught(m.client.chat.completions.create({ model: 'auto', messages: scripted({ status: 404, errorMessage: 'The model `qwen-x` does not exist.' }) }));
    expect(notFound).toBeInstanceOf(OpenAI.NotFoundError);
    expect(notFound.message).toContain('The model `qwen-x` does not exist.');
    const tooLarge = await raw(m.key, { messages: scripted({ status: 413, errorMessage: 'Payload too large for this server' }) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.message).toContain('Payload too large for this server');
    const unprocessable = await caught(m.client.chat.completions.create({ model: 'auto', messages: scripted({ status: 422, errorStyle: 'fastapi', errorMessage: 'top_k must be >= -1' }) }));
    expect(unprocessable).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(unprocessable.code).toBe('upstream_rejected');
    expect(unprocessable.message).toContain('top_k must be >= -1');
    expect(unprocessable.headers?.get('x-should-retry')).toBe('false');
  });

  it('a streaming request that the upstream rejects gets the JSON error before any byte', async () => {
    const error = await caught(m.client.chat.completions.create({ model: 'auto', stream: true, messages: scripted({ status: 400, errorMessage: contextTooLong }) }));
    expect(error.status).toBe(400);
    expect(error.message).toContain('maximum context length');
  });

  it('control characters and long reasons are cleaned; HTML bodies are not shown', async () => {
    const noisy = await raw(m.key, { messages: scripted({ status: 400, errorMessage: `bad\u0000\u001b[31m input ${'x'.repeat(2000)}` }) });
    // eslint-disable-next-line no-control-regex
    expect(noisy.body.message).not.toMatch(/[\u0000-\u001f]/);
    expect(noisy.body.message.length).toBeLessThan(700);
  });
});

describe('upstream 401/403: our misconfiguration', () => {
  it('answers 502 with an operator-facing message and none of the upstream text', async () => {
    for (const status of [401, 403]) {
      const { status: code, body, headers } = await raw(m.key, { messages: scripted({ status, errorMessage: 'Incorrect API key provided: sk-live-SECRET. Organization org-abc123.' }) });
      expect(code).toBe(502);
      expect(body.code).toBe('upstream_error');
      expect(body.message).toContain(`HTTP ${status}`);
      expect(body.message).toContain('operator');
      expect(JSON.stringify(body)).not.toContain('SECRET');
      expect(JSON.stringify(body)).not.toContain('org-abc123');
      expect(body.debug).toMatchObject({ upstreamStatus: status, quotaRefunded: true });
      expect(headers.get('x-should-retry')).toBe('false');
    }
  });
});

describe('upstream 429', () => {
  it("is a 429 that keeps the upstream's Retry-After; the SDK waits that long before its retry", async () => {
    const { status, body, headers } = await raw(m.key, { messages: scripted({ status: 429, retryAfter: '7', errorMessage: 'Rate limit reached for org-abc123' }) });
    expect(status).toBe(429);
    expect(body).toMatchObject({ code: 'upstream_rate_limited', stage: 'upstream', debug: { quotaRefunded: true, upstreamStatus: 429 } });
    expect(headers.get('retry-after')).toBe('7');
    expect(headers.get('x-should-retry')).toBeNull();
    expect(JSON.stringify(body)).not.toContain('org-abc123');
    const once = new OpenAI({ apiKey: m.key, baseURL: `${h.app.url}/v1`, maxRetries: 1 });
    const before = h.upstream.stats.requests;
    const started = Date.now();
    const error = await caught(once.chat.completions.create({ model: 'auto', messages: scripted({ status: 429, retryAfter: '1' }) }));
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(h.upstream.stats.requests - before).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    // An HTTP date works too.
    const dated = await raw(m.key, { messages: scripted({ status: 429, retryAfter: new Date(Date.now() + 30_000).toUTCString() }) });
    expect(Number(dated.headers.get('retry-after'))).toBeGreaterThanOrEqual(28);
    expect(Number(dated.headers.get('retry-after'))).toBeLessThanOrEqual(31);
  });

  it('an upstream 503 passes its Retry-After on too', async () => {
    const { status, headers } = await raw(m.key, { messages: scripted({ status: 503, retryAfter: '5' }) });
    expect(status).toBe(503);
    expect(headers.get('retry-after')).toBe('5');
  });
});

describe('fallback and rejections', () => {
  it('a rejection ends the fallback; a 404 at one deployment tries the next', async () => {
    const { startApp } = await import('../../helpers/app.ts');
    const app = await startApp(h.mode.config, {
      config: {
        rateLimits: { ipPerMinute: 100_000 },
        upstreams: { first: { baseUrl: first.url, label: 'gpu-a' }, second: { baseUrl: h.upstream.url, label: 'gpu-b' } },
        models: { 'svc-2.1-pro': { tier: 'premium', inputPrice: 0.435, outputPrice: 0.87, deployments: [{ upstream: 'first', model: 'a' }, { upstream: 'second', model: 'b' }] } },
      },
    });
    try {
      const member = await (await import('./harness.ts')).createMember(app, { planPackage: 'pro' });
      const client = new OpenAI({ apiKey: member.key, baseURL: `${app.url}/v1`, maxRetries: 0 });
      const hi = [{ role: 'user' as const, content: 'hi' }];
      first.setScript(() => ({ status: 400, errorMessage: contextTooLong }));
      let before = h.upstream.stats.requests;
      const rejected = await caught(client.chat.completions.create({ model: 'svc-2.1-pro', messages: hi }));
      expect(rejected.status).toBe(400);
      expect(h.upstream.stats.requests - before).toBe(0);
      first.setScript(() => ({ status: 404, errorMessage: 'model a is not loaded here' }));
      before = h.upstream.stats.requests;
      const served = await client.chat.completions.create({ model: 'svc-2.1-pro', messages: hi });
      expect(served.choices[0]!.message.content).toBe('Hello from the scripted upstream.');
      expect(h.upstream.stats.requests - before).toBe(1);
    } finally {
      first.setScript(null);
      await app.close();
    }
  });
});

describe('a reply that breaks after its status line', () => {
  it('is a 502 upstream_error, refunded, sent upstream once and not to the next deployment', async () => {
    // Announces a body it never finishes: 200, then 40 of 400 bytes, then the connection drops.
    let calls = 0;
    const broken = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls += 1;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
        res.write('{"id":"chatcmpl-broken","object":"chat.c');
        setTimeout(() => res.socket?.destroy(), 20);
      });
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    const { startApp } = await import('../../helpers/app.ts');
    const app = await startApp(h.mode.config, {
      config: {
        rateLimits: { ipPerMinute: 100_000 },
        upstreams: { broken: { baseUrl: `http://127.0.0.1:${(broken.address() as AddressInfo).port}/v1`, label: 'gpu-broken' }, second: { baseUrl: h.upstream.url, label: 'gpu-b' } },
        models: { 'svc-2.1-pro': { tier: 'premium', inputPrice: 0.435, outputPrice: 0.87, deployments: [{ upstream: 'broken', model: 'a' }, { upstream: 'second', model: 'b' }] } },
      },
    });
    try {
      const member = await (await import('./harness.ts')).createMember(app, { planPackage: 'pro' });
      const before = h.upstream.stats.requests;
      const answer = await raw(member.key, { model: 'svc-2.1-pro', messages: [{ role: 'user', content: 'hi' }] }, `${app.url}/v1/chat/completions`);
      expect(answer.status).toBe(502);
      expect(answer.body).toMatchObject({ code: 'upstream_error', stage: 'upstream', debug: { quotaRefunded: true, upstreamHost: 'gpu-broken', upstreamStatus: 200 } });
      expect(calls).toBe(1);
      expect(h.upstream.stats.requests - before).toBe(0);
      const [row] = await ledgerRows(h.database, member.accountId);
      expect(row).toMatchObject({ status: 'refunded', cost_micros: '0' });
    } finally {
      await app.close();
      broken.close();
    }
  });
});
