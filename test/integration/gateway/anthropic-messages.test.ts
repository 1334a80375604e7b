/**
 * `POST /v1/messages` (the Anthropic Messages API) over a chat-completions upstream, through the official
 * Anthropic SDK and on the wire: the message and its exact event stream, tools with streaming (replayed
 * from one non-streaming upstream call), content blocks as chat content, count_tokens, Anthropic-shaped
 * errors with svc's headers and refunds, model aliases, and the same metering and ledger as chat.
 */
import Anthropic from '@anthropic-ai/sdk';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { settled } from '../../helpers/app.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

const plans = {
  ...defaultPlans,
  // Free: a premium pool too small for any reservation (402). Max: two requests a minute (429).
  free: { ...defaultPlans.free, pools: { fast: defaultPlans.free.pools.fast, premium: { day: 0.000001, week: 1, month: 1 } } },
  max: { ...defaultPlans.max, requestsPerMinute: 2 },
};

let h: Harness;
let m: Member;
let claude: Anthropic;

beforeAll(async () => {
  h = await startHarness({ config: { plans } });
  m = await h.member({ planPackage: 'pro' });
  claude = client(m.key);
});
afterAll(() => h?.close());

function client(apiKey: string): Anthropic {
  return new Anthropic({ apiKey, baseURL: h.app.url, maxRetries: 0 });
}

async function post(key: string, body: unknown, path = '/v1/messages') {
  return fetch(`${h.app.url}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** The SSE events of a reply: `event:` name and parsed `data:` of each, checking each event has exactly those two lines. */
function events(text: string): { event: string; data: Record<string, any> }[] {
  return text
    .trim()
    .split('\n\n')
    .map((block) => {
      const [eventLine, dataLine, ...rest] = block.split('\n');
      expect(rest).toEqual([]);
      const data = JSON.parse(dataLine!.slice('data: '.length)) as Record<string, any>;
      expect(eventLine).toBe(`event: ${data.type}`);
      return { event: data.type as string, data };
    });
}

async function failure(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Anthropic.APIError);
  return error as InstanceType<typeof Anthropic.APIError>;
}

const weather = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };
const callWeather = '#script {"toolCalls":[{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}]}';

describe('POST /v1/messages', () => {
  it('answers with a message; a claude-* name stands for an svc model; system blocks and turns reach the upstream as chat', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const message = await client(member.key).messages.create({
      model: 'claude-opus-4-1-20250805',
      max_tokens: 300,
      system: [{ type: 'text', text: 'You are terse.' }, { type: 'text', text: 'Answer in English.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'Hello?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Hi.' }] },
        { role: 'user', content: [{ type: 'text', text: 'How are you?' }] },
      ],
      // Sampling fields the SDK's types no longer list (Anthropic's newest models take none); the API accepts them.
      ...({ temperature: 0.2, top_k: 20 } as object),
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
    });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'svc-2.1-pro', stop_reason: 'end_turn', stop_sequence: null, content: [{ type: 'text', text: 'Hello from the scripted upstream.' }] });
    expect(message.id).toMatch(/^msg_/);
    expect(message.usage).toMatchObject({ output_tokens: 8, input_tokens: expect.any(Number) });
    expect(h.upstream.bodies.at(-1)).toMatchObject({
      model: 'svc-2.1-pro',
      max_tokens: 300,
      temperature: 0.2,
      top_k: 20,
      stop: ['END'],
      messages: [
        { role: 'system', content: 'You are terse.\n\nAnswer in English.' },
        { role: 'user', content: 'Hello?' },
        { role: 'assistant', content: 'Hi.' },
        { role: 'user', content: 'How are you?' },
      ],
    });
    expect(h.upstream.bodies.at(-1)).not.toHaveProperty('metadata');
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ product: 'chat', model: 'svc-2.1-pro', status: 'ok', output_tokens: 8, input_tokens: message.usage.input_tokens, stream: false });
  });

  it('is metered exactly as the same chat completion', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const prompt = 'Count to three, please.';
    await member.client.chat.completions.create({ model: 'svc-2.1', messages: [{ role: 'user', content: prompt }], max_tokens: 100 });
    await client(member.key).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: prompt }] });
    const [chat, messages] = await ledgerRows(h.database, member.accountId, 2);
    const expected = ledgerEntry(member.accountId, { model: 'svc-2.1', routedModel: 'svc-2.1', class: 'premium', inputTokens: chat!.input_tokens, outputTokens: 8 });
    for (const row of [chat!, messages!]) {
      expect(row).toMatchObject({
        product: expected.product,
        model: expected.model,
        routed_model: expected.routedModel,
        class: expected.class,
        channel: expected.channel,
        credential_kind: expected.credentialKind,
        payer_kind: expected.payerKind,
        status: expected.status,
        input_tokens: expected.inputTokens,
        output_tokens: expected.outputTokens,
        estimated: false,
      });
    }
    expect(messages!.cost_micros).toBe(chat!.cost_micros);
  });

  it('an image block reaches the upstream as image_url; tool results as tool messages', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await claude.messages.create({
      model: 'svc-2.1-fast',
      max_tokens: 64,
      messages: [
        { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'text', text: 'What is this?' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'sunny' }] }, { type: 'text', text: 'And now?' }] },
      ],
      tools: [weather],
    });
    expect(h.upstream.bodies.at(-1)!.messages).toEqual([
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }, { type: 'text', text: 'What is this?' }] },
      { role: 'assistant', content: 'Let me look.', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
      { role: 'user', content: 'And now?' },
    ]);
    expect(h.upstream.bodies.at(-1)!.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weather.input_schema } }]);
  });

  it("streams Anthropic's exact event sequence; the SDK's stream helper gets the same text", async () => {
    const reply = await post(m.key, { model: 'claude-haiku-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: '#script {"chunks":3,"chunkText":"ab \\"c\\" "}' }] });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('text/event-stream');
    const stream = events(await reply.text());
    expect(stream.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(stream[0]!.data.message).toMatchObject({ type: 'message', role: 'assistant', model: 'svc-2.1-fast', content: [], stop_reason: null });
    expect(stream[1]!.data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(stream[3]!.data).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ab "c" ' } });
    expect(stream[6]!.data).toEqual({ type: 'content_block_stop', index: 0 });
    expect(stream[7]!.data).toMatchObject({ delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3, input_tokens: expect.any(Number) } });

    const sdk = claude.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Stream please.' }] });
    let deltas = '';
    sdk.on('text', (text) => (deltas += text));
    const final = await sdk.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'tok '.repeat(8) }]);
    expect(deltas).toBe('tok '.repeat(8));
    expect(final.usage.output_tokens).toBe(8);
  });

  it('tools with stream: one non-streaming upstream call, replayed as tool_use events; the SDK builds the input from input_json_delta', async () => {
    const before = h.upstream.stats.requests;
    const stream = claude.messages.stream({ model: 'svc-2.1-fast', max_tokens: 200, tools: [weather], tool_choice: { type: 'any', disable_parallel_tool_use: true }, messages: [{ role: 'user', content: callWeather }] });
    const final = await stream.finalMessage();
    expect(h.upstream.stats.requests - before).toBe(1);
    expect(h.upstream.bodies.at(-1)).toMatchObject({ stream: false, tool_choice: 'required', parallel_tool_calls: false });
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([{ type: 'tool_use', id: 'call_0_scripted', name: 'get_weather', input: { city: 'Paris' } }]);

    const raw = events(await (await post(m.key, { model: 'svc-2.1-fast', max_tokens: 200, stream: true, tools: [weather], messages: [{ role: 'user', content: callWeather }] })).text());
    expect(raw.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(raw[1]!.data.content_block).toEqual({ type: 'tool_use', id: 'call_0_scripted', name: 'get_weather', input: {} });
    expect(raw[3]!.data.delta).toEqual({ type: 'input_json_delta', partial_json: '{"city":"Paris"}' });
  });

  it('thinking maps to enable_thinking and reasoning_effort, said in x-svc-thinking; reasoning comes back as a thinking block', async () => {
    const reply = await post(m.key, {
      model: 'svc-2.1',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 20000 },
      messages: [{ role: 'user', content: '#script {"reasoning":"Let me think.","chunks":2}' }],
      stream: true,
    });
    expect(reply.headers.get('x-svc-thinking')).toBe('enabled; reasoning_effort=high; from=budget_tokens');
    expect(h.upstream.bodies.at(-1)).toMatchObject({ chat_template_kwargs: { enable_thinking: true }, reasoning_effort: 'high' });
    const stream = events(await reply.text());
    expect(stream.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_stop', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(stream[1]!.data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    expect(stream[3]!.data.delta).toEqual({ type: 'thinking_delta', thinking: 'Let me think.' });
    expect(stream[5]!.data).toMatchObject({ index: 1, content_block: { type: 'text' } });

    const adaptive = await post(m.key, { model: 'svc-2.1', max_tokens: 100, thinking: { type: 'adaptive' }, output_config: { effort: 'medium' }, messages: [{ role: 'user', content: 'Hi' }] });
    expect(adaptive.headers.get('x-svc-thinking')).toBe('disabled; from=adaptive; effort=medium');
    expect(h.upstream.bodies.at(-1)).toMatchObject({ chat_template_kwargs: { enable_thinking: false } });
    expect(h.upstream.bodies.at(-1)).not.toHaveProperty('reasoning_effort');
    const omitted = await claude.messages.create({ model: 'svc-2.1', max_tokens: 100, thinking: { type: 'enabled', budget_tokens: 2048, display: 'omitted' } as never, messages: [{ role: 'user', content: '#script {"reasoning":"hidden"}' }] });
    expect(omitted.content).toEqual([{ type: 'text', text: 'Hello from the scripted upstream.' }]);
  });

  it('lowers max_tokens above the model cap (x-svc-max-tokens) and names ignored fields (x-svc-ignored)', async () => {
    const reply = await post(m.key, { model: 'claude-opus-5-5', max_tokens: 128000, messages: [{ role: 'user', content: 'Hi' }], context_management: { edits: [] }, service_tier: 'auto' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-svc-max-tokens')).toBe('8192');
    expect(reply.headers.get('x-svc-ignored')).toBe('context_management, service_tier');
    expect(h.upstream.bodies.at(-1)).toMatchObject({ max_tokens: 8192 });
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it('counts system, messages and tools with the key as x-api-key; unmetered', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const small = await client(member.key).messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hello there.' }] });
    const large = await client(member.key).messages.countTokens({ model: 'claude-sonnet-4-5', system: 'You are a helpful assistant. '.repeat(20), messages: [{ role: 'user', content: 'Hello there.' }], tools: [weather] });
    expect(small.input_tokens).toBeGreaterThan(3);
    expect(large.input_tokens).toBeGreaterThan(small.input_tokens + 100);
    await settled(h.app);
    expect(await ledgerRows(h.database, member.accountId, 0, 0)).toEqual([]);
    const unknown = await failure(client(member.key).messages.countTokens({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }));
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    const anonymous = await failure(client('svc_live_nope').messages.countTokens({ model: 'svc-2.1', messages: [{ role: 'user', content: 'x' }] }));
    expect(anonymous).toBeInstanceOf(Anthropic.AuthenticationError);
  });
});

describe('errors in Anthropic shape, with svc headers', () => {
  it('401 → AuthenticationError; the body is {type:"error", error:{type, message}}; request id and code in headers', async () => {
    const error = await failure(client('svc_live_not_a_real_key').messages.create({ model: 'svc-2.1', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }));
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(error.requestID).toMatch(/^mbr_/);
    const reply = await post('svc_live_not_a_real_key', { model: 'svc-2.1', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('x-svc-error-code')).toBe('sign_in_required');
    const requestId = reply.headers.get('x-svc-request-id');
    expect(await reply.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.any(String) }, request_id: requestId });
    const bearer = await fetch(`${h.app.url}/v1/messages`, { method: 'POST', headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'svc-2.1', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }) });
    expect(bearer.status).toBe(200);
  });

  it('400 → BadRequestError naming the field; 404 for a model svc does not know', async () => {
    const noMax = await failure(claude.messages.create({ model: 'svc-2.1', messages: [{ role: 'user', content: 'x' }] } as never));
    expect(noMax).toBeInstanceOf(Anthropic.BadRequestError);
    expect(noMax.message).toContain('max_tokens');
    const hot = await failure(claude.messages.create({ model: 'svc-2.1', max_tokens: 10, ...({ temperature: 1.5 } as object), messages: [{ role: 'user', content: 'x' }] }));
    expect(hot.message).toContain('temperature');
    const serverTool = await failure(claude.messages.create({ model: 'svc-2.1', max_tokens: 10, tools: [{ type: 'code_execution_20250825', name: 'code_execution' } as never], messages: [{ role: 'user', content: 'x' }] }));
    expect(serverTool.message).toContain('tools[0].type');
    const badBlock = await post(m.key, { model: 'svc-2.1', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'hologram' }] }] });
    expect(await badBlock.json()).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('messages[0].content[0].type') } });
    const unknown = await failure(claude.messages.create({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }));
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect(unknown.headers?.get('x-svc-error-code')).toBe('model_not_found');
  });

  it('402 (pool exhausted) → billing_error with our message; nothing reaches the upstream', async () => {
    const free = await h.member();
    const before = h.upstream.stats.requests;
    const reply = await post(free.key, { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] });
    expect(reply.status).toBe(402);
    expect(reply.headers.get('x-svc-error-code')).toBe('quota_exceeded');
    expect(await reply.json()).toMatchObject({ type: 'error', error: { type: 'billing_error', message: expect.stringMatching(/pool/i) } });
    expect(h.upstream.stats.requests).toBe(before);
    expect(await failure(client(free.key).messages.create({ model: 'svc-2.1', max_tokens: 100, messages: [{ role: 'user', content: 'x' }] }))).toBeInstanceOf(Anthropic.PaymentRequiredError);
  });

  it('429 → RateLimitError with retry-after', async () => {
    const max = await h.member({ planPackage: 'max_x5' });
    const body = { model: 'svc-2.1', max_tokens: 10, messages: [{ role: 'user' as const, content: 'x' }] };
    await client(max.key).messages.create(body);
    await client(max.key).messages.create(body);
    const limited = await failure(client(max.key).messages.create(body));
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(Number(limited.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers?.get('x-svc-error-code')).toBe('rate_limited');
    expect(limited.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

  it('an upstream failure before output → 529 overloaded (503) or 502 api_error, refunded', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const overloaded = await failure(client(member.key).messages.create({ model: 'svc-2.1', max_tokens: 10, messages: [{ role: 'user', content: '#script {"status":503}' }] }));
    expect(overloaded).toBeInstanceOf(Anthropic.OverloadedError);
    expect(overloaded.status).toBe(529);
    expect(overloaded.error).toMatchObject({ error: { type: 'overloaded_error' } });
    expect(overloaded.headers?.get('x-svc-error-code')).toBe('upstream_unavailable');
    const failed = await failure(client(member.key).messages.create({ model: 'svc-2.1', max_tokens: 10, stream: true, messages: [{ role: 'user', content: '#script {"status":500}' }] }));
    expect(failed).toBeInstanceOf(Anthropic.InternalServerError);
    expect(failed.status).toBe(502);
    expect(failed.error).toMatchObject({ error: { type: 'api_error' } });
    const rows = await ledgerRows(h.database, member.accountId, 2);
    for (const row of rows) expect(row).toMatchObject({ status: 'refunded', cost_micros: '0' });
  });

  it('a failure mid-stream is an error event; what was produced is billed', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const reply = await post(member.key, { model: 'svc-2.1', max_tokens: 100, stream: true, messages: [{ role: 'user', content: '#script {"failAfterChunks":2,"intervalMs":5}' }] });
    const stream = events(await reply.text());
    expect(stream.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_delta', 'error']);
    expect(stream.at(-1)!.data).toEqual({ type: 'error', error: { type: 'api_error', message: expect.stringContaining('mid-stream') } });
    const sdk = await failure(
      (async () => {
        for await (const event of await client(member.key).messages.create({ model: 'svc-2.1', max_tokens: 100, stream: true, messages: [{ role: 'user', content: '#script {"failAfterChunks":2,"intervalMs":5}' }] })) void event;
      })(),
    );
    expect(sdk.message).toContain('mid-stream');
    const rows = await ledgerRows(h.database, member.accountId, 2);
    for (const row of rows) {
      // Estimated with the tokenizer from the text that was produced ("tok tok ").
      expect(row).toMatchObject({ status: 'upstream_failed', estimated: true });
      expect(row.output_tokens).toBeGreaterThanOrEqual(2);
      expect(row.output_tokens).toBeLessThanOrEqual(4);
      expect(Number(row.cost_micros)).toBeGreaterThan(0);
    }
  });
});

describe('models', () => {
  it("/v1/models answers Anthropic's list shape to anthropic-version, with x-api-key", async () => {
    const page = await claude.models.list();
    expect(page.data.map((model) => model.id)).toContain('svc-2.1');
    expect(page.data[0]).toMatchObject({ type: 'model', id: expect.any(String), display_name: expect.any(String), created_at: expect.stringMatching(/^\d{4}-/) });
    expect(await claude.models.retrieve('claude-haiku-4-5')).toMatchObject({ type: 'model', id: 'svc-2.1-fast' });
    const openai = await m.client.models.list();
    expect(openai.data[0]).toMatchObject({ object: 'model' });
  });

  it('aliases work for chat completions too', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const completion = await member.client.chat.completions.create({ model: 'claude-haiku-4-5-20251001', messages: [{ role: 'user', content: 'x' }] });
    expect(completion.model).toBe('svc-2.1-fast');
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ model: 'svc-2.1-fast', class: 'fast' });
  });
});

describe('the HTTP layer', () => {
  /** A POST with a chunked body, which the chat lane leaves to Fastify's route. */
  function chunked(body: string, contentType = 'application/json'): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(`${h.app.url}/v1/messages?beta=true`, { method: 'POST', headers: { 'x-api-key': m.key, 'content-type': contentType, 'transfer-encoding': 'chunked' } }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (part: string) => (text += part));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('answers the same through the lane and through Fastify, errors in Anthropic shape on both', async () => {
    const body = JSON.stringify({ model: 'svc-2.1', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
    const lane = (await (await post(m.key, JSON.parse(body))).json()) as Record<string, unknown>;
    const fastify = await chunked(body);
    expect(fastify.status).toBe(200);
    expect(Object.keys(JSON.parse(fastify.text) as object)).toEqual(Object.keys(lane));
    const broken = await fetch(`${h.app.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': m.key, 'content-type': 'application/json' }, body: '{"model":' });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('not valid JSON') } });
    const brokenFastify = await chunked('{"model":');
    expect(brokenFastify.status).toBe(400);
    expect(JSON.parse(brokenFastify.text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const browser = await fetch(`${h.app.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': m.key, 'content-type': 'application/json', origin: 'https://app.example' }, body });
    expect(browser.headers.get('access-control-allow-origin')).toBe('*');
    expect(browser.headers.get('access-control-expose-headers')).toContain('x-svc-thinking');
    const unsupported = await chunked(body, 'text/plain');
    expect(unsupported.status).toBe(415);
    expect(unsupported.headers['x-svc-error-code']).toBe('unsupported_media_type');
    expect(JSON.parse(unsupported.text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});
