/**
 * `POST /v1/chat/completions` through the official `openai` SDK against the scripted upstream.
 */
import type OpenAI from 'openai';
import { costMicros } from '../../../server/metering/pricing.ts';
import { settled } from '../../helpers/app.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness();
  m = await h.member();
});
afterAll(() => h?.close());

const hello = [{ role: 'user' as const, content: 'Say hello.' }];

describe('non-streaming', () => {
  it('returns an OpenAI chat.completion and bills it in the ledger', async () => {
    const completion = await m.client.chat.completions.create({ model: 'svc-2.1', messages: hello });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('svc-2.1');
    expect(completion.choices[0]!.message).toEqual({ role: 'assistant', content: 'Hello from the scripted upstream.', refusal: null });
    expect(completion.choices[0]!.logprobs).toBeNull();
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 8, total_tokens: 11 });
    const [row] = await ledgerRows(h.database, m.accountId);
    expect(row).toMatchObject({ status: 'ok', input_tokens: 3, output_tokens: 8, estimated: false, model: 'svc-2.1', channel: 'api', credential_kind: 'api_key', stream: false });
    // premium: 0.435 and 0.87 per 1M tokens, 75 % off → 108,750 and 217,500 micros per 1M tokens.
    expect(Number(row!.cost_micros)).toBe(Math.ceil((3 * 108_750 + 8 * 217_500) / 1_000_000));
  });

  it('applies the recommended values upstream, routes auto, and keeps thinking off', async () => {
    h.upstream.bodies.length = 0;
    const completion = await m.client.chat.completions.create({ messages: hello } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(completion.model).toBe('svc-2.1-fast');
    const sent = h.upstream.bodies.at(-1)!;
    expect(sent).toMatchObject({
      model: 'svc-2.1-fast',
      temperature: 0.7,
      top_p: 0.8,
      presence_penalty: 1.5,
      max_tokens: 1024,
      chat_template_kwargs: { enable_thinking: false },
    });
    await m.client.chat.completions.create({ model: 'auto', messages: hello, temperature: 0.1, max_tokens: 50, reasoning_effort: 'high' });
    expect(h.upstream.bodies.at(-1)).toMatchObject({ temperature: 0.1, max_tokens: 50, chat_template_kwargs: { enable_thinking: true } });
  });

  it('returns tool calls', async () => {
    h.upstream.setScript((body) => (body.tools ? { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] } : undefined));
    try {
      const completion = await m.client.chat.completions.create({
        model: 'svc-2.1-fast',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      });
      const choice = completion.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      const call = choice.message.tool_calls![0]!;
      expect(call.type).toBe('function');
      expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
      // The tool result goes back in the next turn.
      const next = await m.client.chat.completions.create({
        model: 'svc-2.1-fast',
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: choice.message.tool_calls! },
          { role: 'tool', tool_call_id: call.id, content: '{"temp":18}' },
        ],
      });
      expect(next.choices[0]!.message.content).toBe('Hello from the scripted upstream.');
    } finally {
      h.upstream.setScript(null);
    }
  });

  it('estimates usage with a tokenizer when the upstream omits it, and marks the row', async () => {
    const member = await h.member();
    const completion = await member.client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: '#script {"usage":"absent"}\nHi' }] });
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ estimated: true, status: 'ok' });
    expect(row!.output_tokens).toBe(completion.usage!.completion_tokens);
  });
});

describe('streaming', () => {
  it('streams chunks the SDK accumulates, with role once and finish_reason last', async () => {
    const stream = await m.client.chat.completions.create({ model: 'svc-2.1-fast', messages: hello, stream: true });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBe(10); // role chunk + 8 content + finish
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'svc-2.1-fast' && c.id === chunks[0]!.id)).toBe(true);
    expect(chunks.filter((c) => c.choices[0]?.delta.role !== undefined)).toHaveLength(1);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('tok '.repeat(8));
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
    const final = await m.client.chat.completions.stream({ model: 'svc-2.1-fast', messages: hello }).finalChatCompletion();
    expect(final.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'tok '.repeat(8) });
  });

  it('with include_usage: usage null on every chunk, then one usage chunk with no choices', async () => {
    const member = await h.member();
    const stream = await member.client.chat.completions.create({ model: 'svc-2.1', messages: hello, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    // svc's own usage chunk, with what svc billed (receipts: `usage.cost`).
    const cost = costMicros(h.app.app.services.registry.get('svc-2.1')!.rates, 3, 8);
    expect(last.usage).toEqual({ prompt_tokens: 3, completion_tokens: 8, total_tokens: 11, cost: { amount_micros: cost, currency: 'USD' } });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ stream: true, input_tokens: 3, output_tokens: 8, estimated: false, status: 'ok' });
  });

  it('frames exactly as SSE data events ending with [DONE]', async () => {
    const response = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1-fast', messages: hello, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toMatch(/^mbr_/);
    const text = await response.text();
    const events = text.split('\n\n');
    expect(events.pop()).toBe('');
    expect(events.at(-1)).toBe('data: [DONE]');
    for (const event of events) expect(event).toMatch(/^data: [^\n]+$/);
  });
});

describe('server-timing', () => {
  /** `auth;dur=0.012, admit;dur=0.250, upstream;dur=80.1` → { auth: 0.012, … } */
  const stages = (header: string | null) => Object.fromEntries((header ?? '').split(', ').map((part) => [part.split(';')[0], Number(part.split('dur=')[1])]));

  it("names the gateway's own steps apart from the model server's time, streaming or not", async () => {
    h.upstream.setScript(() => ({ latencyMs: 80 }));
    try {
      for (const stream of [false, true]) {
        const response = await fetch(`${h.app.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'svc-2.1-fast', messages: hello, stream }),
        });
        expect(response.status).toBe(200);
        const timing = stages(response.headers.get('server-timing'));
        expect(Object.keys(timing)).toEqual(['auth', 'admit', 'upstream']);
        for (const value of Object.values(timing)) expect(value).toBeGreaterThanOrEqual(0);
        // The upstream's 80 ms land in `upstream`, not in the gateway's steps.
        expect(timing.upstream).toBeGreaterThanOrEqual(79);
        expect(timing.auth! + timing.admit!).toBeLessThan(79);
        await response.text();
      }
    } finally {
      h.upstream.setScript(null);
    }
  });
});

describe('usage', () => {
  it('GraphQL usage and GET /api/membership/usage show what the ledger billed', async () => {
    const member = await h.member();
    await member.client.chat.completions.create({ model: 'svc-2.1', messages: hello });
    const [row] = await ledgerRows(h.database, member.accountId);
    await settled(h.app);
    const response = await fetch(`${h.app.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ usage { planId currency pools { class window used { amountMicros } limit { amountMicros } remaining { amountMicros } resetsAt } } }' }),
    });
    const { data } = (await response.json()) as { data: { usage: { planId: string; currency: string; pools: { class: string; window: string; used: { amountMicros: number }; limit: { amountMicros: number }; remaining: { amountMicros: number }; resetsAt: string }[] } } };
    expect(data.usage).toMatchObject({ planId: 'free', currency: 'USD' });
    expect(data.usage.pools.map((p) => `${p.class}/${p.window}`)).toEqual(['fast/day', 'fast/week', 'fast/month', 'premium/day', 'premium/week', 'premium/month']);
    for (const pool of data.usage.pools.filter((p) => p.class === 'premium')) {
      expect(pool.used.amountMicros).toBe(Number(row!.cost_micros));
      expect(pool.remaining.amountMicros).toBe(pool.limit.amountMicros - pool.used.amountMicros);
    }
    const rest = await fetch(`${h.app.url}/api/membership/usage`, { headers: { authorization: `Bearer ${member.key}` } });
    const body = (await rest.json()) as { pools: unknown[] };
    expect(body.pools).toEqual(data.usage.pools.map((p) => expect.objectContaining({ class: p.class, window: p.window, resetsAt: p.resetsAt })));
    expect((await fetch(`${h.app.url}/api/membership/usage`)).status).toBe(401);
  });

  it('leaves no reservation or stream slot behind once everything has settled', async () => {
    const redis = h.app.app.services.redis.redis!;
    await settled(h.app);
    expect(await redis.zcard('res:index')).toBe(0);
    const prefix = h.app.config.redis.keyPrefix;
    expect(await redis.keys(`${prefix}res:*`)).toEqual([]);
    expect(await redis.keys(`${prefix}streams:*`)).toEqual([]);
  });
});
