/**
 * What svc does not own reaches the model server (the scripted upstream records what it received),
 * subject to each upstream's `forwardFields`; the legacy `functions` API works end to end; JSON nested
 * too deep is a 400, not a crash; and `toolsWithStream: emulate` replays a tool call as a proper stream.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness({
    config: { gateway: { toolsWithStream: 'emulate', forwardFields: { allow: ['*'], deny: ['metadata'] } } },
  });
  m = await h.member({ planPackage: 'pro' });
});
afterAll(() => h?.close());

const extras = {
  store: true,
  metadata: { run: '7' },
  service_tier: 'auto',
  modalities: ['text'],
  prediction: { type: 'content', content: 'Hello' },
  web_search_options: {},
  verbosity: 'low',
  prompt_cache_key: 'conversation-1',
  safety_identifier: 'user-1',
  top_k: 20,
  min_p: 0.05,
  repetition_penalty: 1.05,
};

async function post(body: Record<string, unknown>) {
  return fetch(`${h.app.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('fields svc does not own', () => {
  it('are forwarded to the model server as sent (less the configured deny list)', async () => {
    const completion = await m.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'hi' }], ...extras } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(completion.choices[0]!.message.content).toBe('Hello from the scripted upstream.');
    const { metadata: _dropped, ...forwarded } = extras;
    expect(h.upstream.bodies.at(-1)).toMatchObject(forwarded);
    expect(h.upstream.bodies.at(-1)).not.toHaveProperty('metadata');
    // svc's own fields are still its own: the recommended values, the upstream model name.
    expect(h.upstream.bodies.at(-1)).toMatchObject({ model: 'svc-2.1-fast', temperature: 0.7, max_tokens: 1024 });
  });

  it("an upstream's own forwardFields policy replaces the default for it", async () => {
    const { startApp } = await import('../../helpers/app.ts');
    const app = await startApp(h.mode.config, {
      config: {
        rateLimits: { ipPerMinute: 100_000 },
        upstreams: { picky: { baseUrl: h.upstream.url, label: 'picky', forwardFields: { allow: ['top_k', 'metadata'], deny: ['metadata'] } } },
        models: { 'svc-2.1-rev': { tier: 'premium', inputPrice: 0.435, outputPrice: 0.87, deployments: [{ upstream: 'picky', model: 'picky-model' }] } },
      },
    });
    try {
      const member = await (await import('./harness.ts')).createMember(app, { planPackage: 'pro' });
      const client = new OpenAI({ apiKey: member.key, baseURL: `${app.url}/v1`, maxRetries: 0 });
      await client.chat.completions.create({ model: 'svc-2.1-rev', messages: [{ role: 'user', content: 'hi' }], stop: ['\n\n'], ...extras } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      const received = h.upstream.bodies.at(-1)!;
      expect(received.model).toBe('picky-model');
      expect(received.top_k).toBe(20);
      expect(received.stop).toEqual(['\n\n']);
      for (const dropped of ['metadata', 'store', 'min_p', 'service_tier', 'prediction']) expect(received).not.toHaveProperty(dropped);
    } finally {
      await app.close();
    }
  });

  it('JSON nested deeper than svc serializes is a 400 naming the limit, and the server stays up', async () => {
    const depth = 20_000;
    const body = `{"model":"auto","messages":[{"role":"user","content":"hi"}],"metadata":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const response = await post(body as unknown as Record<string, unknown>);
    expect(response.status).toBe(400);
    const envelope = (await response.json()) as { code: string; message: string };
    expect(envelope.code).toBe('invalid_request');
    expect(envelope.message).toContain('64 levels');
    const inPart = `{"messages":[{"role":"user","content":[{"type":"text","text":"x","cache_control":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}]}]}`;
    expect((await post(inPart as unknown as Record<string, unknown>)).status).toBe(400);
    expect((await m.client.chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'still up?' }] })).choices).toHaveLength(1);
  });
});

describe('the legacy functions API', () => {
  it('functions become tools upstream, and the reply comes back as function_call', async () => {
    const weather = { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
    const reply = await post({
      model: 'auto',
      messages: [{ role: 'user', content: '#script {"toolCalls":[{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}]}' }],
      functions: [weather],
      function_call: 'auto',
    });
    expect(reply.status).toBe(200);
    const completion = (await reply.json()) as { choices: { message: Record<string, unknown>; finish_reason: string }[] };
    expect(completion.choices[0]!.finish_reason).toBe('function_call');
    expect(completion.choices[0]!.message.function_call).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(completion.choices[0]!.message).not.toHaveProperty('tool_calls');
    const sent = h.upstream.bodies.at(-1)!;
    expect(sent.tools).toEqual([{ type: 'function', function: weather }]);
    expect(sent.tool_choice).toBe('auto');
    expect(sent).not.toHaveProperty('functions');

    // The next turn, in the legacy shape, reaches the upstream as tool messages.
    const next = await post({
      model: 'auto',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { role: 'function', name: 'get_weather', content: '{"sky":"clear"}' },
      ],
      functions: [weather],
    });
    expect(next.status).toBe(200);
    const messages = h.upstream.bodies.at(-1)!.messages as Record<string, unknown>[];
    expect(messages[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_legacy_1', function: { name: 'get_weather' } }] });
    expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_legacy_1', content: '{"sky":"clear"}' });
  });
});

describe('toolsWithStream: emulate', () => {
  const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
  const callWeather = '#script {"toolCalls":[{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"},{"name":"get_weather","arguments":"{\\"city\\":\\"Rome\\"}"}]}';

  it('calls the upstream without streaming and replays the tool calls as a stream the SDKs parse', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const response = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'auto', stream: true, stream_options: { include_usage: true }, tools, messages: [{ role: 'user', content: callWeather }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(h.upstream.bodies.at(-1)!.stream).toBe(false);
    const text = await response.text();
    const events = text.trim().split('\n\n');
    for (const event of events) expect(event).toMatch(/^data: /);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice(6)) as { id: string; model: string; choices: any[]; usage?: unknown });
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.every((chunk) => chunk.model === 'svc-2.1-fast')).toBe(true);
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta));
    expect(deltas.filter((delta) => delta.role !== undefined)).toHaveLength(1);
    expect(deltas[0].role).toBe('assistant');
    const fragments = deltas.flatMap((delta) => delta.tool_calls ?? []);
    expect(fragments).toEqual([
      { index: 0, id: 'call_0_scripted', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
      { index: 1, id: 'call_1_scripted', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, function: { arguments: '{"city":"Rome"}' } },
    ]);
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(['tool_calls']);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 16 });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ status: 'ok', stream: true, output_tokens: 16, estimated: false });
  });

  it('the openai SDK accumulates the replayed stream into the same tool calls', async () => {
    const stream = m.client.chat.completions.stream({ model: 'auto', tools, messages: [{ role: 'user', content: callWeather }] });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls?.map((call) => call.type === 'function' && call.function.arguments)).toEqual(['{"city":"Paris"}', '{"city":"Rome"}']);
    // Without include_usage, no usage chunk.
    const plain = await m.client.chat.completions.create({ model: 'auto', stream: true, tools, messages: [{ role: 'user', content: 'Just say hi.' }] });
    let content = '';
    for await (const chunk of plain) {
      expect(chunk.usage ?? undefined).toBeUndefined();
      content += chunk.choices[0]?.delta.content ?? '';
    }
    expect(content).toBe('Hello from the scripted upstream.');
  });

  it('an upstream failure is still a clean JSON error before any byte, refunded', async () => {
    const error = await m.client.chat.completions
      .create({ model: 'auto', stream: true, tools, messages: [{ role: 'user', content: '#script {"status":400,"errorMessage":"tool schema invalid"}' }] })
      .then(
        () => null,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
    expect(error?.status).toBe(400);
    expect(error?.message).toContain('tool schema invalid');
  });
});
