/**
 * `POST /v1/responses` and `POST /v1/completions` over a chat-completions upstream, on the wire and
 * through the official SDK: the reply and event shapes of CONFORMANCE "Responses API", function tools,
 * `previous_response_id` and `item_reference` (kept per payer), errors, and the same metering as chat.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness();
  m = await h.member({ planPackage: 'pro' });
});
afterAll(() => h?.close());

const weatherTool = { type: 'function' as const, name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: false };
const callWeather = '#script {"toolCalls":[{"name":"get_weather","arguments":"{\\"city\\":\\"Paris\\"}"}]}';

async function post(path: string, key: string, body: unknown) {
  return fetch(`${h.app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

interface Event {
  event: string;
  data: { type: string; sequence_number: number; [key: string]: any };
}

function events(text: string): Event[] {
  return text
    .trim()
    .split('\n\n')
    .map((block) => {
      const [eventLine, dataLine, ...rest] = block.split('\n');
      expect(rest).toEqual([]);
      expect(eventLine).toMatch(/^event: /);
      expect(dataLine).toMatch(/^data: \{/);
      return { event: eventLine!.slice(7), data: JSON.parse(dataLine!.slice(6)) };
    });
}

describe('POST /v1/responses', () => {
  it('answers a string input with instructions as a response object; metered as a chat turn', async () => {
    const member = await h.member();
    const response = await member.client.responses.create({ model: 'auto', input: 'Say hi.', instructions: 'Be brief.', max_output_tokens: 64 });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'svc-2.1-fast', instructions: 'Be brief.', max_output_tokens: 64, error: null });
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(response.output_text).toBe('Hello from the scripted upstream.');
    expect(response.output).toEqual([
      { type: 'message', id: expect.stringMatching(/^msg_/), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello from the scripted upstream.', annotations: [], logprobs: [] }] },
    ]);
    expect(response.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: 8, total_tokens: expect.any(Number) });
    expect(h.upstream.bodies.at(-1)).toMatchObject({ model: 'svc-2.1-fast', max_tokens: 64, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hi.' }] });
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ product: 'chat', model: 'auto', status: 'ok', output_tokens: 8, stream: false });
  });

  it('streams the documented events in order, each with a rising sequence_number; usage on completion', async () => {
    const reply = await post('/v1/responses', m.key, { model: 'auto', input: [{ role: 'user', content: [{ type: 'input_text', text: '#script {"chunks":3,"chunkText":"ab "}' }] }], stream: true });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('text/event-stream');
    const stream = events(await reply.text());
    expect(stream.map((e) => e.data.sequence_number)).toEqual(stream.map((_, i) => i));
    for (const e of stream) expect(e.event).toBe(e.data.type);
    expect(stream.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const itemId = stream[2]!.data.item.id;
    expect(stream.filter((e) => e.event === 'response.output_text.delta').every((e) => e.data.item_id === itemId && e.data.output_index === 0 && e.data.content_index === 0)).toBe(true);
    expect(stream[7]!.data.text).toBe('ab ab ab ');
    const completed = stream.at(-1)!.data.response;
    expect(completed).toMatchObject({ status: 'completed', output: [{ type: 'message', id: itemId, content: [{ type: 'output_text', text: 'ab ab ab ' }] }] });
    expect(completed.usage).toMatchObject({ output_tokens: 3 });
    expect(stream[0]!.data.response).toMatchObject({ id: completed.id, status: 'in_progress', output: [] });
  });

  it('the SDK stream helper accumulates the same text', async () => {
    const stream = m.client.responses.stream({ model: 'auto', input: 'Stream please.' });
    let deltas = '';
    stream.on('response.output_text.delta', (event) => {
      deltas += event.delta;
    });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('tok '.repeat(8));
    expect(deltas).toBe(final.output_text);
  });

  it('function tools: a function_call item, and the follow-up with function_call_output', async () => {
    const first = await m.client.responses.create({ model: 'auto', input: callWeather, tools: [weatherTool] });
    expect(first.output).toEqual([{ type: 'function_call', id: expect.stringMatching(/^fc_/), call_id: 'call_0_scripted', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' }]);
    expect(h.upstream.bodies.at(-1)!.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather for a city', parameters: weatherTool.parameters, strict: false } }]);
    const second = await m.client.responses.create({
      model: 'auto',
      tools: [weatherTool],
      store: false,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_0_scripted', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_0_scripted', output: '{"sky":"clear"}' },
      ],
    });
    expect(second.output_text).toBe('Hello from the scripted upstream.');
    expect(h.upstream.bodies.at(-1)!.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0_scripted', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_0_scripted', content: '{"sky":"clear"}' },
    ]);
  });

  it('function tools with stream: true: one non-streaming upstream call, replayed as function_call events', async () => {
    const reply = await post('/v1/responses', m.key, { model: 'auto', input: callWeather, tools: [weatherTool], stream: true });
    expect(reply.status).toBe(200);
    expect(h.upstream.bodies.at(-1)!.stream).toBe(false);
    const stream = events(await reply.text());
    expect(stream.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(stream[2]!.data.item).toMatchObject({ type: 'function_call', call_id: 'call_0_scripted', name: 'get_weather', arguments: '' });
    expect(stream[3]!.data.delta).toBe('{"city":"Paris"}');
    expect(stream.at(-1)!.data.response.output).toEqual([expect.objectContaining({ type: 'function_call', arguments: '{"city":"Paris"}', status: 'completed' })]);
  });

  it('previous_response_id continues the conversation (instructions not carried), for the same payer only', async () => {
    const first = await m.client.responses.create({ model: 'auto', input: 'My name is Ann.', instructions: 'Only for the first turn.' });
    const second = await m.client.responses.create({ model: 'auto', input: 'What is my name?', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect(h.upstream.bodies.at(-1)!.messages).toEqual([
      { role: 'user', content: 'My name is Ann.' },
      { role: 'assistant', content: 'Hello from the scripted upstream.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    const third = await m.client.responses.create({ model: 'auto', input: 'And again?', previous_response_id: second.id });
    expect((h.upstream.bodies.at(-1)!.messages as unknown[]).length).toBe(5);
    expect(third.status).toBe('completed');

    const stranger = await h.member();
    const refused = await post('/v1/responses', stranger.key, { model: 'auto', input: 'Whose is this?', previous_response_id: first.id });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: 'invalid_request', error: { param: 'previous_response_id' } });

    const unstored = await m.client.responses.create({ model: 'auto', input: 'Forget me.', store: false });
    const missing = await post('/v1/responses', m.key, { model: 'auto', input: 'Remember?', previous_response_id: unstored.id });
    expect(missing.status).toBe(400);
  });

  it('item_reference brings back an earlier reply by its item id', async () => {
    const first = await m.client.responses.create({ model: 'auto', input: 'Tell me something.' });
    const itemId = first.output[0]!.id!;
    // The item's id is its response's: the reference is read from the kept response, not a key of its own.
    expect(itemId).toBe(`msg_${first.id.slice('resp_'.length)}`);
    await m.client.responses.create({
      model: 'auto',
      input: [{ role: 'user', content: 'Tell me something.' }, { type: 'item_reference', id: itemId }, { role: 'user', content: 'More.' }],
    });
    expect(h.upstream.bodies.at(-1)!.messages).toEqual([
      { role: 'user', content: 'Tell me something.' },
      { role: 'assistant', content: 'Hello from the scripted upstream.' },
      { role: 'user', content: 'More.' },
    ]);
    // A streamed reply's item too.
    const streamed = await m.client.responses.create({ model: 'auto', input: 'Again.', stream: true });
    let streamedId = '';
    let streamedText = '';
    for await (const event of streamed) {
      if (event.type !== 'response.completed') continue;
      const item = event.response.output[0] as { id: string; content: { text: string }[] };
      [streamedId, streamedText] = [item.id, item.content[0]!.text];
    }
    expect(streamedText.length).toBeGreaterThan(0);
    await m.client.responses.create({ model: 'auto', input: [{ type: 'item_reference', id: streamedId }, { type: 'item_reference', id: itemId }] });
    expect(h.upstream.bodies.at(-1)!.messages).toEqual([
      { role: 'assistant', content: streamedText },
      { role: 'assistant', content: 'Hello from the scripted upstream.' },
    ]);
    const stranger = await h.member();
    const refused = await post('/v1/responses', stranger.key, { model: 'auto', input: [{ type: 'item_reference', id: itemId }] });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { param: 'input[0].id' } });
  });

  it('names what it cannot do, with the Responses field names', async () => {
    const cases: [unknown, string][] = [
      [{ model: 'auto', input: [{ type: 'computer_call_output', call_id: 'x' }] }, 'input[0].type'],
      [{ model: 'auto', input: 'x', tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] }, 'tools[0].type'],
      [{ model: 'auto', input: 'x', max_output_tokens: 0 }, 'max_output_tokens'],
      [{ model: 'auto', input: 'x', background: true }, 'background'],
      [{ model: 'auto' }, 'input'],
      [{ model: 'auto', input: 'x', text: { format: { type: 'yaml' } } }, 'text.format.type'],
      [{ model: 'auto', input: [{ role: 'wizard', content: 'x' }] }, 'input[0].role'],
    ];
    for (const [body, param] of cases) {
      const reply = await post('/v1/responses', m.key, body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(((await reply.json()) as { error: { param: string } }).error.param).toBe(param);
    }
    const unknown = await post('/v1/responses', m.key, { model: 'gpt-4o', input: 'x' });
    expect(unknown.status).toBe(404);
  });

  it('maps text.format and reasoning.effort, and forwards fields it does not read', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    await post('/v1/responses', m.key, { model: 'auto', input: 'JSON please', text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } }, reasoning: { effort: 'high' }, top_k: 5 });
    expect(h.upstream.bodies.at(-1)).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
      reasoning_effort: 'high',
      chat_template_kwargs: { enable_thinking: true },
      top_k: 5,
    });
  });

  it('an upstream rejection is the envelope with the upstream reason; a mid-stream failure is an error event', async () => {
    const rejected = await post('/v1/responses', m.key, { model: 'auto', input: '#script {"status":400,"errorMessage":"context too long"}' });
    expect(rejected.status).toBe(400);
    expect(await rejected.json()).toMatchObject({ code: 'upstream_rejected', stage: 'upstream', debug: { quotaRefunded: true } });

    const broken = await post('/v1/responses', m.key, { model: 'auto', input: '#script {"failAfterChunks":2,"intervalMs":5}', stream: true });
    const stream = events(await broken.text());
    expect(stream.filter((e) => e.event === 'response.output_text.delta')).toHaveLength(2);
    const error = stream.at(-2)!;
    expect(error.event).toBe('error');
    expect(error.data).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('mid-stream'), error: { code: 'upstream_error' } });
    expect(stream.at(-1)!.data.response).toMatchObject({ status: 'failed', error: { code: 'upstream_error' } });

    const sdk = await (async () => {
      const s = await m.client.responses.create({ model: 'auto', input: '#script {"failAfterChunks":2,"intervalMs":5}', stream: true });
      for await (const _event of s) void _event;
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(sdk).toBeInstanceOf(OpenAI.APIError);
  });
});

describe('POST /v1/completions (legacy)', () => {
  it('answers a prompt as a text completion, streamed or not', async () => {
    const completion = await m.client.completions.create({ model: 'auto', prompt: 'Once upon a time', max_tokens: 32 });
    expect(completion).toMatchObject({ object: 'text_completion', model: 'svc-2.1-fast', choices: [{ text: 'Hello from the scripted upstream.', index: 0, finish_reason: 'stop', logprobs: null }] });
    expect(completion.usage).toMatchObject({ completion_tokens: 8 });
    expect(h.upstream.bodies.at(-1)).toMatchObject({ messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 32 });

    const stream = await m.client.completions.create({ model: 'auto', prompt: 'Count', stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: unknown = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('text_completion');
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('tok '.repeat(8));
    expect(usage).toMatchObject({ completion_tokens: 8 });
  });

  it('refuses what a chat model cannot do, by name', async () => {
    for (const [body, param] of [
      [{ prompt: ['a', 'b'] }, 'prompt'],
      [{ prompt: 'a', echo: true }, 'echo'],
      [{ prompt: 'a', suffix: 'z' }, 'suffix'],
      [{ prompt: 'a', best_of: 3 }, 'best_of'],
      [{}, 'prompt'],
    ] as const) {
      const reply = await post('/v1/completions', m.key, { model: 'auto', ...body });
      expect(reply.status).toBe(400);
      expect(((await reply.json()) as { error: { param: string } }).error.param).toBe(param);
    }
  });
});
