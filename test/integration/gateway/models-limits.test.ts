/**
 * Model limits, as coding agents meet them (issue 48 item 4): `GET /v1/models` states each model's
 * `context_length` and `max_output_tokens`, and an output cap above the model's (opencode asks for 32,000,
 * Claude Code for up to 128k) is served at the model's cap on chat completions, the Responses API and legacy
 * completions alike — the upstream is asked for the cap, the reservation covers the cap (the ledger row and a
 * 402's reason say so), and `x-svc-max-tokens` tells the client. With `gateway.maxTokens: reject` it is a 400.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultModels, defaultPlans } from '../../../server/config/catalogue.ts';
import { costMicros } from '../../../server/metering/pricing.ts';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { createMember, ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

const models = { ...defaultModels, 'svc-2.1': { ...defaultModels['svc-2.1'], maxOutputTokens: 4096, contextLength: 32_768 } };

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness({ config: { models } });
  m = await h.member({ planPackage: 'pro' });
});
afterAll(() => h?.close());

const hello = [{ role: 'user' as const, content: 'Say hi.' }];

function post(app: { url: string }, key: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('GET /v1/models states the limits', () => {
  it('every model has context_length and max_output_tokens, as configured, in the list and on its own', async () => {
    const list = await m.client.models.list();
    const byId = new Map(list.data.map((model) => [model.id, model as typeof model & { context_length?: number; max_output_tokens?: number }]));
    expect(byId.size).toBe(Object.keys(models).length);
    for (const model of byId.values()) {
      expect(model.context_length, model.id).toBeTypeOf('number');
      expect(model.max_output_tokens, model.id).toBeTypeOf('number');
    }
    expect(byId.get('svc-2.1')).toMatchObject({ object: 'model', owned_by: 'svc', context_length: 32_768, max_output_tokens: 4096 });
    expect(byId.get('svc-2.1-fast')).toMatchObject({ context_length: 131_072, max_output_tokens: 8192 });
    expect(await m.client.models.retrieve('svc-2.1')).toMatchObject({ id: 'svc-2.1', context_length: 32_768, max_output_tokens: 4096 });
  });
});

describe('an output cap above the model is served at the model cap', () => {
  it("chat: opencode's max_tokens 32000 is answered, the upstream asked for 8192, x-svc-max-tokens says so, the reservation is the cap's", async () => {
    const member = await h.member({ planPackage: 'pro' });
    const body = JSON.stringify({ model: 'svc-2.1-fast', max_tokens: 32_000, messages: hello });
    const reply = await fetch(`${h.app.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' }, body });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-svc-max-tokens')).toBe('8192');
    expect(h.upstream.bodies.at(-1)).toMatchObject({ max_tokens: 8192 });
    const [row] = await ledgerRows(h.database, member.accountId);
    const rates = h.app.app.services.registry.get('svc-2.1-fast')!.rates;
    expect(Number(row!.reserved_micros)).toBe(costMicros(rates, Buffer.byteLength(body), 8192));
  });

  it('the openai SDK sees the header; a cap within the limit has none; each model has its own cap', async () => {
    const { response } = await m.client.chat.completions.create({ model: 'svc-2.1', max_tokens: 32_000, messages: hello }).withResponse();
    expect(response.headers.get('x-svc-max-tokens')).toBe('4096');
    expect(h.upstream.bodies.at(-1)).toMatchObject({ max_tokens: 4096 });
    const within = await m.client.chat.completions.create({ model: 'svc-2.1', max_tokens: 4096, messages: hello }).withResponse();
    expect(within.response.headers.get('x-svc-max-tokens')).toBeNull();
    const newer = await m.client.chat.completions.create({ model: 'auto', max_completion_tokens: 100_000, messages: hello }).withResponse();
    expect(newer.response.headers.get('x-svc-max-tokens')).toBe('8192');
    expect(h.upstream.bodies.at(-1)).toMatchObject({ max_tokens: 8192 });
  });

  it('a stream carries the header too', async () => {
    const reply = await post(h.app, m.key, '/v1/chat/completions', { model: 'svc-2.1-fast', stream: true, max_tokens: 32_000, messages: hello });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('text/event-stream');
    expect(reply.headers.get('x-svc-max-tokens')).toBe('8192');
    expect(await reply.text()).toContain('data: [DONE]');
  });

  it('the Responses API (max_output_tokens) and legacy completions (max_tokens) follow the same rule', async () => {
    const responses = await post(h.app, m.key, '/v1/responses', { model: 'svc-2.1', input: 'hi', max_output_tokens: 100_000 });
    expect(responses.status).toBe(200);
    expect(responses.headers.get('x-svc-max-tokens')).toBe('4096');
    expect(((await responses.json()) as { max_output_tokens: number }).max_output_tokens).toBe(4096);
    expect(h.upstream.bodies.at(-1)).toMatchObject({ max_tokens: 4096 });
    const completions = await post(h.app, m.key, '/v1/completions', { model: 'auto', prompt: 'Once upon a time', max_tokens: 50_000 });
    expect(completions.status).toBe(200);
    expect(completions.headers.get('x-svc-max-tokens')).toBe('8192');
  });
});

describe('the reservation covers the cap, not what was asked', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Fast day pool 0.001 USD: 8192 output tokens of svc-2.1-fast (0.000688 USD) and a short prompt fit, 32,000
    // (0.002688) would not. Premium day pool 0.0005: 8192 tokens of svc-2.1 (0.001782) do not fit.
    const pools = { fast: { day: 0.001, week: 1, month: 4 }, premium: { day: 0.0005, week: 1, month: 4 } };
    const plans = { ...defaultPlans, free: { ...defaultPlans.free, requestsPerMinute: 1000, pools } };
    app = await startApp(h.mode.config, { config: { plans, rateLimits: { ipPerMinute: 100_000 } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
  });
  afterAll(() => app?.close());

  it('max_tokens 32000 is admitted on a pool that 32000 would overdraw; a 402 names the cap as the reason', async () => {
    const member = await createMember(app);
    const admitted = await post(app, member.key, '/v1/chat/completions', { model: 'svc-2.1-fast', max_tokens: 32_000, messages: hello });
    expect(admitted.status).toBe(200);
    expect(admitted.headers.get('x-svc-max-tokens')).toBe('8192');
    const refused = await post(app, member.key, '/v1/chat/completions', { model: 'svc-2.1', max_tokens: 32_000, messages: hello });
    expect(refused.status).toBe(402);
    expect(refused.headers.get('x-svc-max-tokens')).toBe('8192');
    const body = (await refused.json()) as { code: string; message: string };
    expect(body.code).toBe('quota_exceeded');
    expect(body.message).toContain('because max_tokens is 8192');
    expect(body.message).not.toContain('32000');
  });
});

describe('gateway.maxTokens: reject', () => {
  let app: TestApp;
  let member: Member;
  beforeAll(async () => {
    app = await startApp(h.mode.config, { config: { gateway: { maxTokens: 'reject' }, rateLimits: { ipPerMinute: 100_000 } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
    member = await createMember(app, { planPackage: 'pro' });
  });
  afterAll(() => app?.close());

  it('answers 400 naming the field and the cap, on every text API; within the cap all is as before', async () => {
    const chat = await member.client.chat.completions.create({ model: 'svc-2.1-fast', max_tokens: 32_000, messages: hello }).catch((error: unknown) => error as InstanceType<typeof OpenAI.BadRequestError>);
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect(chat).toMatchObject({ status: 400, param: 'max_tokens', code: 'invalid_request' });
    expect((chat as Error).message).toContain('max_tokens must be at most 8192 for model svc-2.1-fast');
    const responses = await post(app, member.key, '/v1/responses', { model: 'auto', input: 'hi', max_output_tokens: 100_000 });
    expect(responses.status).toBe(400);
    expect(await responses.json()).toMatchObject({ error: { param: 'max_output_tokens' }, message: expect.stringContaining('max_output_tokens must be at most 8192') });
    const messages = await fetch(`${app.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': member.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1', max_tokens: 32_000, messages: hello }),
    });
    expect(messages.status).toBe(400);
    expect(((await messages.json()) as { error: { message: string } }).error.message).toContain('max_tokens must be at most 8192');
    const fine = await member.client.chat.completions.create({ model: 'svc-2.1-fast', max_tokens: 8192, messages: hello }).withResponse();
    expect(fine.response.headers.get('x-svc-max-tokens')).toBeNull();
  });
});
