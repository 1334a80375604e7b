/**
 * Every error the gateway returns, as the official SDK sees it: status → exception class, the envelope
 * (code, stage, actions, debug), refunds, and a failure after the stream began.
 */
import OpenAI from 'openai';
import { settled } from '../../helpers/app.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness({ config: { gateway: { upstreamTimeoutMs: 800 } } });
  m = await h.member();
});
afterAll(() => h?.close());

const hello = [{ role: 'user' as const, content: 'Say hello.' }];

async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

type Envelope = { code: string; stage: string; actions: string[]; requestId: string; debug: Record<string, unknown>; error: { param: string | null } };

/** The same request with fetch, for the whole envelope (the SDK keeps only `error`). */
async function envelopeOf(key: string, body: Record<string, unknown>): Promise<{ status: number; headers: Headers; body: Envelope }> {
  const response = await fetch(`${h.app.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Envelope };
}

async function usedMicros(member: Member): Promise<number> {
  const response = await fetch(`${h.app.url}/api/membership/usage`, { headers: { authorization: `Bearer ${member.key}` } });
  const body = (await response.json()) as { pools: { class: string; window: string; used: { amountMicros: number } }[] };
  return body.pools.filter((p) => p.window === 'day').reduce((sum, p) => sum + p.used.amountMicros, 0);
}

describe('errors before the first byte', () => {
  it('401 sign_in_required → AuthenticationError', async () => {
    const client = new OpenAI({ apiKey: 'svc_live_not_a_real_key', baseURL: `${h.app.url}/v1`, maxRetries: 0 });
    const error = await failure(client.chat.completions.create({ model: 'auto', messages: hello }));
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.code).toBe('sign_in_required');
    expect(error.requestID).toMatch(/^mbr_/);
    const raw = await envelopeOf('svc_live_not_a_real_key', { messages: hello });
    expect(raw.body.stage).toBe('auth');
    expect(raw.headers.get('x-svc-error-code')).toBe('sign_in_required');
  });

  it('400 invalid_request names the param → BadRequestError', async () => {
    const error = await failure(m.client.chat.completions.create({ model: 'auto', messages: hello, temperature: 5 }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.code).toBe('invalid_request');
    expect(error.param).toBe('temperature');
    const none = await failure(m.client.chat.completions.create({ model: 'auto', messages: hello, max_tokens: 0 }));
    expect(none.param).toBe('max_tokens');
    const noMessages = await failure(m.client.chat.completions.create({ model: 'auto', messages: [] }));
    expect(noMessages.param).toBe('messages');
  });

  it('unknown model → 404 model_not_found listing the valid ids → NotFoundError', async () => {
    const error = await failure(m.client.chat.completions.create({ model: 'gpt-4o', messages: hello }));
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.code).toBe('model_not_found');
    expect(error.message).toContain('svc-2.1-fast');
    expect(error.param).toBe('model');
  });

  it('upstream 500 before output → 502 upstream_error, refunded in full → InternalServerError', async () => {
    const member = await h.member();
    const before = h.upstream.stats.requests;
    const error = await failure(member.client.chat.completions.create({ model: 'svc-2.1', messages: [{ role: 'user', content: '#script {"status":500}' }] }));
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_error');
    const { body, headers } = await envelopeOf(member.key, { model: 'svc-2.1', messages: [{ role: 'user', content: '#script {"status":500}' }] });
    expect(headers.get('x-svc-error-stage')).toBe('upstream');
    expect(body.stage).toBe('upstream');
    expect(body.actions).toEqual(['retry_later', 'switch_model']);
    expect(body.debug).toMatchObject({ productModel: 'svc-2.1', upstreamStatus: 500, upstreamHost: 'default', quotaRefunded: true });
    expect(typeof body.debug.latencyMs).toBe('number');
    expect(JSON.stringify(body)).not.toContain('127.0.0.1');
    expect(h.upstream.stats.requests - before).toBe(2);
    const rows = await ledgerRows(h.database, member.accountId, 2);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ status: 'refunded', cost_micros: '0', output_tokens: 0 });
    await settled(h.app);
    expect(await usedMicros(member)).toBe(0);
  });

  it('upstream 503 → 503 upstream_unavailable; slow upstream → 504 upstream_timeout', async () => {
    const unavailable = await failure(m.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: '#script {"status":503}' }] }));
    expect(unavailable).toBeInstanceOf(OpenAI.InternalServerError);
    expect(unavailable.status).toBe(503);
    expect(unavailable.code).toBe('upstream_unavailable');
    const slow = await failure(m.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: '#script {"latencyMs":3000}' }] }));
    expect(slow.status).toBe(504);
    expect(slow.code).toBe('upstream_timeout');
    const raw = await envelopeOf(m.key, { messages: [{ role: 'user', content: '#script {"latencyMs":3000}' }] });
    expect(raw.body.debug).toMatchObject({ quotaRefunded: true, upstreamHost: 'default', upstreamStatus: null });
  });

  it('says when retrying cannot help (x-should-retry: false) and when to retry (retry-after on 503)', async () => {
    // The upstream refuses the request itself (e.g. context too long): a retry would be refused again.
    const retrying = new OpenAI({ apiKey: m.key, baseURL: `${h.app.url}/v1`, maxRetries: 2 });
    const before = h.upstream.stats.requests;
    const refused = await failure(retrying.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: '#script {"status":400}' }] }));
    expect(refused.status).toBe(400);
    expect(refused.code).toBe('upstream_rejected');
    expect(refused.headers?.get('x-should-retry')).toBe('false');
    expect(h.upstream.stats.requests - before).toBe(1);
    const invalid = await envelopeOf(m.key, { messages: hello, temperature: 5 });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('x-should-retry')).toBe('false');
    const unavailable = await envelopeOf(m.key, { messages: [{ role: 'user', content: '#script {"status":503}' }] });
    expect(unavailable.status).toBe(503);
    expect(Number(unavailable.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(unavailable.headers.get('x-should-retry')).toBeNull();
  });

  it('upstream unreachable → 503 upstream_unavailable', async () => {
    const { startApp } = await import('../../helpers/app.ts');
    const other = await startApp(h.mode.config, { config: { rateLimits: { ipPerMinute: 1000 } }, env: { SVC_UPSTREAM_URL: 'http://127.0.0.1:9/v1' } });
    try {
      const client = new OpenAI({ apiKey: m.key, baseURL: `${other.url}/v1`, maxRetries: 0 });
      const error = await failure(client.chat.completions.create({ model: 'auto', messages: hello }));
      expect(error.status).toBe(503);
      expect(error.code).toBe('upstream_unavailable');
    } finally {
      await other.close();
    }
  });
});

describe('errors after the stream began', () => {
  it('a mid-stream upstream failure is one error event; produced tokens are billed', async () => {
    const member = await h.member();
    const stream = await member.client.chat.completions.create({
      model: 'svc-2.1-fast',
      messages: [{ role: 'user', content: '#script {"failAfterChunks":3,"intervalMs":5}' }],
      stream: true,
    });
    const received: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('mid-stream');
    expect(received.join('')).toBe('tok '.repeat(3));
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ status: 'upstream_failed', estimated: true });
    // Estimated with the tokenizer from the text that was produced ("tok tok tok ").
    expect(row!.output_tokens).toBeGreaterThanOrEqual(3);
    expect(row!.output_tokens).toBeLessThanOrEqual(6);
    expect(Number(row!.cost_micros)).toBeGreaterThan(0);
  });

  it('a stream cut by the upstream (socket destroyed) ends with an error event, not [DONE]', async () => {
    const response = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'auto', stream: true, messages: [{ role: 'user', content: '#script {"failAfterChunks":2,"failMode":"destroy","intervalMs":5}' }] }),
    });
    const text = await response.text();
    const events = text.trim().split('\n\n');
    expect(events.at(-1)).toMatch(/^data: \{"error":\{"message":"[^"]+","type":"api_error","code":"upstream_(error|unavailable)","param":null\}\}$/);
    expect(text).not.toContain('[DONE]');
  });
});
