/**
 * The compatibility suite: the client libraries people point at an OpenAI-compatible server, unchanged,
 * against svc (real PostgreSQL and Redis, the default config: tools with streams emulated) in front of the scripted
 * upstream. Each row is one client doing one thing a user does; at the end a client × feature table is
 * printed. Clients: `openai`; `ai` with `@ai-sdk/openai` (its default model is the Responses API, `.chat()`
 * the chat API) and with `@ai-sdk/openai-compatible`; `@langchain/openai` (chat, `useResponsesApi`, a
 * streaming tool agent from `langchain`).
 */
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { APICallError, generateText, isStepCount, streamText, tool, type LanguageModel } from 'ai';
import { createAgent } from 'langchain';
import type { IncomingMessage, ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ledgerRows, startHarness, type Harness, type Member } from '../integration/gateway/harness.ts';

let h: Harness;
let m: Member;
let baseURL: string;

/** What the clients sent svc (path and body), to check which API each one really used. */
const received: { path: string; body: Record<string, unknown> }[] = [];

beforeAll(async () => {
  h = await startHarness({
    beforeListen: (app) => {
      // Read off the wire, whether Fastify or the chat lane (server/http/chat-lane.ts) answers the request:
      // the body's 'data' events are copied as they are emitted, without a listener of our own.
      const [serve] = app.server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
      app.server.removeAllListeners('request');
      app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
        if (req.method === 'POST' && req.url?.startsWith('/v1/')) {
          const parts: Buffer[] = [];
          const emit = req.emit.bind(req);
          req.emit = ((event: string, ...args: unknown[]) => {
            if (event === 'data') parts.push(args[0] as Buffer);
            if (event === 'end') received.push({ path: req.url!, body: JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown> });
            return emit(event, ...args);
          }) as typeof req.emit;
        }
        serve!(req, res);
      });
    },
  });
  m = await h.member({ planPackage: 'pro' });
  baseURL = `${h.app.url}/v1`;
});
afterAll(async () => {
  printTable();
  await h?.close();
});

// ── the table ─────────────────────────────────────────────────────────────────────────────────────────
const clients = ['openai', 'ai + @ai-sdk/openai', 'ai + @ai-sdk/openai .chat()', 'ai + @ai-sdk/openai-compatible', '@langchain/openai', '@langchain/openai useResponsesApi'] as const;
type Client = (typeof clients)[number];
const features = ['text', 'stream', 'stream usage', 'tools', 'stream + tools', 'conversation', 'extra fields', 'upstream 400', 'upstream 404', 'upstream 422', 'upstream 429', 'legacy'] as const;
type Feature = (typeof features)[number];
const results = new Map<string, 'pass' | 'FAIL'>();

function row(client: Client, feature: Feature, title: string, run: () => Promise<void>) {
  it(`${client} · ${feature}: ${title}`, async () => {
    try {
      await run();
      results.set(`${client}|${feature}`, 'pass');
    } catch (error) {
      results.set(`${client}|${feature}`, 'FAIL');
      throw error;
    }
  });
}

function printTable() {
  const width = Math.max(...clients.map((client) => client.length));
  const cell = (text: string, size: number) => text.padEnd(size);
  const head = `${cell('client', width)} | ${features.map((f) => f).join(' | ')}`;
  const lines = clients.map((client) => `${cell(client, width)} | ${features.map((f) => cell(results.get(`${client}|${f}`) ?? '—', f.length)).join(' | ')}`);
  const passed = [...results.values()].filter((r) => r === 'pass').length;
  process.stdout.write(`\nClient compatibility (svc ${h?.app.url ?? ''}, toolsWithStream: ${h?.app.config.gateway.toolsWithStream}): ${passed}/${results.size} rows pass\n${head}\n${'-'.repeat(head.length)}\n${lines.join('\n')}\n\n`);
}

// ── what the scripted model does ──────────────────────────────────────────────────────────────────────
const weatherReply = 'It is sunny in Paris.';

/** A model that calls get_weather once, then answers from the tool's result. */
function weatherModel(body: Record<string, unknown>) {
  if (!Array.isArray(body.tools)) return undefined;
  const messages = body.messages as { role: string; content: unknown }[];
  if (messages.at(-1)?.role === 'tool') return { content: weatherReply, chunks: 2, chunkText: 'sunny ' };
  return { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] };
}

function lastUpstreamBody(): Record<string, unknown> {
  return h.upstream.bodies.at(-1)!;
}

/** The requests svc received while `run` ran. */
async function sent(run: () => Promise<void>): Promise<{ path: string; body: Record<string, unknown> }[]> {
  const from = received.length;
  await run();
  return received.slice(from);
}

function withModel<T>(script: (body: Record<string, unknown>) => unknown, run: () => Promise<T>): Promise<T> {
  h.upstream.setScript(script as never);
  return run().finally(() => h.upstream.setScript(null));
}

const refuse = (status: number, message: string) => `#script ${JSON.stringify({ status, errorMessage: message })}`;

/** Upstream requests made while `run` ran (to prove a client did not retry). */
async function upstreamCalls(run: () => Promise<unknown>): Promise<number> {
  const before = h.upstream.stats.requests;
  await run();
  return h.upstream.stats.requests - before;
}

// ── openai ────────────────────────────────────────────────────────────────────────────────────────────
describe('openai', () => {
  const client = () => new OpenAI({ apiKey: m.key, baseURL, maxRetries: 2 });
  const hello = [{ role: 'user' as const, content: 'Say hello.' }];

  row('openai', 'text', 'chat.completions.create', async () => {
    const reply = await client().chat.completions.create({ model: 'auto', messages: hello });
    expect(reply.choices[0]!.message.content).toBe('Hello from the scripted upstream.');
  });
  row('openai', 'stream', 'chat.completions.create({stream: true})', async () => {
    const stream = await client().chat.completions.create({ model: 'auto', messages: hello, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('tok '.repeat(8));
  });
  row('openai', 'stream usage', 'stream_options.include_usage', async () => {
    const stream = await client().chat.completions.create({ model: 'auto', messages: hello, stream: true, stream_options: { include_usage: true } });
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    expect(usage?.completion_tokens).toBe(8);
  });
  row('openai', 'tools', 'a tool call, then the answer from its result', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    await withModel(weatherModel, async () => {
      const first = await client().chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools });
      const call = first.choices[0]!.message.tool_calls![0]!;
      expect(call.type === 'function' && call.function.name).toBe('get_weather');
      const second = await client().chat.completions.create({
        model: 'auto',
        tools,
        messages: [{ role: 'user', content: 'Weather in Paris?' }, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '{"sky":"clear"}' }],
      });
      expect(second.choices[0]!.message.content).toBe(weatherReply);
    });
  });
  row('openai', 'stream + tools', 'chat.completions.stream() with tools (emulated)', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    await withModel(weatherModel, async () => {
      const final = await client().chat.completions.stream({ model: 'auto', messages: [{ role: 'user', content: 'Weather?' }], tools }).finalChatCompletion();
      const call = final.choices[0]!.message.tool_calls![0]!;
      expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    });
  });
  row('openai', 'conversation', 'responses.create with previous_response_id, streamed', async () => {
    const first = await client().responses.create({ model: 'auto', input: 'My name is Ann.', instructions: 'Be brief.' });
    expect(first.output_text).toBe('Hello from the scripted upstream.');
    const stream = client().responses.stream({ model: 'auto', input: 'Who am I?', previous_response_id: first.id });
    const second = await stream.finalResponse();
    expect(second.output_text).toBe('tok '.repeat(8));
    expect((lastUpstreamBody().messages as unknown[]).length).toBe(3);
  });
  row('openai', 'extra fields', 'store, metadata, top_k, min_p … reach the model server', async () => {
    await client().chat.completions.create({ model: 'auto', messages: hello, store: true, metadata: { run: '1' }, service_tier: 'auto', top_k: 20, min_p: 0.05, repetition_penalty: 1.1 } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(lastUpstreamBody()).toMatchObject({ store: true, metadata: { run: '1' }, service_tier: 'auto', top_k: 20, min_p: 0.05, repetition_penalty: 1.1 });
  });
  row('openai', 'upstream 400', 'BadRequestError with the model server reason, not retried', async () => {
    const calls = await upstreamCalls(async () => {
      const error = await client()
        .chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: refuse(400, 'maximum context length is 4096 tokens') }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as Error).message).toContain('maximum context length is 4096 tokens');
    });
    expect(calls).toBe(1);
  });
  row('openai', 'upstream 404', 'NotFoundError', async () => {
    const error = await client()
      .chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: refuse(404, 'model not loaded') }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  });
  row('openai', 'upstream 422', 'UnprocessableEntityError, not retried', async () => {
    const calls = await upstreamCalls(async () => {
      const error = await client()
        .chat.completions.create({ model: 'auto', messages: [{ role: 'user', content: refuse(422, 'top_k must be >= -1') }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    });
    expect(calls).toBe(1);
  });
  row('openai', 'upstream 429', 'RateLimitError after retrying at the Retry-After pace', async () => {
    const started = Date.now();
    const calls = await upstreamCalls(async () => {
      const error = await new OpenAI({ apiKey: m.key, baseURL, maxRetries: 1 }).chat.completions
        .create({ model: 'auto', messages: [{ role: 'user', content: `#script {"status":429,"retryAfter":"1"}` }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    });
    expect(calls).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });
  row('openai', 'legacy', 'completions.create (text completion)', async () => {
    const completion = await client().completions.create({ model: 'auto', prompt: 'Once upon a time', max_tokens: 50 });
    expect(completion.choices[0]!.text).toBe('Hello from the scripted upstream.');
  });
});

// ── Vercel AI SDK ─────────────────────────────────────────────────────────────────────────────────────
const getWeather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }: { city: string }) => ({ city, sky: 'clear' }),
});

function aiRows(client: Client, model: () => LanguageModel, options: { path: string; conversation: boolean; errors: boolean }) {
  row(client, 'text', 'generateText', async () => {
    let result: Awaited<ReturnType<typeof generateText>> | null = null;
    const requests = await sent(async () => {
      result = await generateText({ model: model(), prompt: 'Say hello.' });
    });
    expect(requests.map((r) => r.path)).toEqual([options.path]);
    expect(result!.text).toBe('Hello from the scripted upstream.');
    expect(result!.usage.outputTokens).toBe(8);
  });
  row(client, 'stream', 'streamText', async () => {
    const result = streamText({ model: model(), prompt: 'Stream.' });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('tok '.repeat(8));
  });
  row(client, 'stream usage', 'streamText usage', async () => {
    const result = streamText({ model: model(), prompt: 'Stream.' });
    await result.consumeStream();
    expect((await result.usage).outputTokens).toBe(8);
  });
  row(client, 'tools', 'generateText with a tool, two steps', async () => {
    await withModel(weatherModel, async () => {
      const result = await generateText({ model: model(), prompt: 'Weather in Paris?', tools: { get_weather: getWeather }, stopWhen: isStepCount(3) });
      expect(result.steps[0]!.toolCalls[0]!.input).toEqual({ city: 'Paris' });
      expect(result.text).toBe(weatherReply);
    });
  });
  row(client, 'stream + tools', 'streamText with a tool, two steps', async () => {
    await withModel(weatherModel, async () => {
      let text = '';
      const calls: unknown[] = [];
      const requests = await sent(async () => {
        const result = streamText({ model: model(), prompt: 'Weather in Paris?', tools: { get_weather: getWeather }, stopWhen: isStepCount(3) });
        for await (const part of result.fullStream) {
          if (part.type === 'text-delta') text += part.text;
          if (part.type === 'tool-call') calls.push(part.input);
          if (part.type === 'error') throw part.error;
        }
      });
      expect(requests.map((r) => [r.body.stream, Array.isArray(r.body.tools)])).toEqual([
        [true, true],
        [true, true],
      ]);
      expect(calls).toEqual([{ city: 'Paris' }]);
      expect(text).toBe(weatherReply);
    });
  });
  if (options.conversation) {
    row(client, 'conversation', 'a second turn on the first one’s messages (item_reference)', async () => {
      const first = await generateText({ model: model(), prompt: 'My name is Ann.' });
      let second: Awaited<ReturnType<typeof generateText>> | null = null;
      const requests = await sent(async () => {
        second = await generateText({ model: model(), messages: [{ role: 'user', content: 'My name is Ann.' }, ...first.response.messages, { role: 'user', content: 'Who am I?' }] });
      });
      expect(second!.text).toBe('Hello from the scripted upstream.');
      expect(requests[0]!.body.input).toContainEqual({ type: 'item_reference', id: expect.stringMatching(/^msg_/) });
      expect(lastUpstreamBody().messages).toEqual([
        { role: 'user', content: 'My name is Ann.' },
        { role: 'assistant', content: 'Hello from the scripted upstream.' },
        { role: 'user', content: 'Who am I?' },
      ]);
    });
  }
  if (options.errors) {
    row(client, 'upstream 400', 'APICallError, not retryable, tried once', async () => {
      const calls = await upstreamCalls(async () => {
        const error = await generateText({ model: model(), prompt: refuse(400, 'maximum context length is 4096 tokens') }).catch((e: unknown) => e);
        expect(APICallError.isInstance(error)).toBe(true);
        expect((error as APICallError).isRetryable).toBe(false);
        expect((error as APICallError).statusCode).toBe(400);
        expect((error as Error).message).toContain('maximum context length');
      });
      expect(calls).toBe(1);
    });
  }
}

describe('ai + @ai-sdk/openai (default: the Responses API)', () => {
  aiRows('ai + @ai-sdk/openai', () => createOpenAI({ baseURL, apiKey: m.key })('auto'), { path: '/v1/responses', conversation: true, errors: true });
});

describe('ai + @ai-sdk/openai .chat()', () => {
  aiRows('ai + @ai-sdk/openai .chat()', () => createOpenAI({ baseURL, apiKey: m.key }).chat('auto'), { path: '/v1/chat/completions', conversation: false, errors: true });
  row('ai + @ai-sdk/openai .chat()', 'extra fields', 'providerOptions reach the model server', async () => {
    await generateText({ model: createOpenAI({ baseURL, apiKey: m.key }).chat('auto'), prompt: 'hi', providerOptions: { openai: { store: true, metadata: { run: '2' } } } });
    expect(lastUpstreamBody()).toMatchObject({ store: true, metadata: { run: '2' } });
  });
});

describe('ai + @ai-sdk/openai-compatible', () => {
  const provider = () => createOpenAICompatible({ name: 'svc', baseURL, apiKey: m.key, includeUsage: true });
  aiRows('ai + @ai-sdk/openai-compatible', () => provider()('auto'), { path: '/v1/chat/completions', conversation: false, errors: true });
  row('ai + @ai-sdk/openai-compatible', 'extra fields', 'vLLM sampling extras through providerOptions', async () => {
    await generateText({ model: provider()('auto'), prompt: 'hi', providerOptions: { svc: { top_k: 20, min_p: 0.05, repetition_penalty: 1.1 } } });
    expect(lastUpstreamBody()).toMatchObject({ top_k: 20, min_p: 0.05, repetition_penalty: 1.1 });
  });
});

// ── LangChain ─────────────────────────────────────────────────────────────────────────────────────────
const langchainWeather = langchainTool(async ({ city }: { city: string }) => JSON.stringify({ city, sky: 'clear' }), {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});

function langchainRows(client: Client, fields: Record<string, unknown>, path: string) {
  const chat = (extra: Record<string, unknown> = {}) => new ChatOpenAI({ model: 'auto', apiKey: m.key, configuration: { baseURL }, ...fields, ...extra });
  row(client, 'text', 'invoke', async () => {
    let text = '';
    let outputTokens: number | undefined;
    const requests = await sent(async () => {
      const reply = await chat().invoke('Say hello.');
      text = reply.text;
      outputTokens = reply.usage_metadata?.output_tokens;
    });
    expect(requests.map((r) => r.path)).toEqual([path]);
    expect(text).toBe('Hello from the scripted upstream.');
    expect(outputTokens).toBe(8);
  });
  row(client, 'stream', 'stream', async () => {
    let text = '';
    for await (const chunk of await chat().stream('Stream.')) text += chunk.text;
    expect(text).toBe('tok '.repeat(8));
  });
  row(client, 'stream usage', 'usage_metadata of a stream', async () => {
    let usage: number | undefined;
    for await (const chunk of await chat().stream('Stream.')) usage = chunk.usage_metadata?.output_tokens ?? usage;
    expect(usage).toBe(8);
  });
  row(client, 'tools', 'bindTools, invoke', async () => {
    await withModel(weatherModel, async () => {
      const reply = await chat().bindTools([langchainWeather]).invoke('Weather in Paris?');
      expect(reply.tool_calls?.[0]).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    });
  });
  row(client, 'stream + tools', 'a streaming tool agent (langchain createAgent, streaming: true)', async () => {
    await withModel(weatherModel, async () => {
      const agent = createAgent({ model: chat({ streaming: true }), tools: [langchainWeather] });
      let text = '';
      const requests = await sent(async () => {
        const stream = await agent.stream({ messages: [{ role: 'user', content: 'Weather in Paris?' }] }, { streamMode: 'messages' });
        for await (const [message] of stream) if (message.getType() === 'ai') text += message.text;
      });
      expect(requests.map((r) => [r.path, r.body.stream, Array.isArray(r.body.tools)])).toEqual([
        [path, true, true],
        [path, true, true],
      ]);
      expect(text).toBe(weatherReply);
    });
  });
  row(client, 'upstream 400', 'fails at once with the reason (no 7 retries)', async () => {
    const started = Date.now();
    const calls = await upstreamCalls(async () => {
      const error = await chat({ maxRetries: 6 })
        .invoke(refuse(400, 'maximum context length is 4096 tokens'))
        .catch((e: unknown) => e);
      expect((error as Error).message).toContain('maximum context length is 4096 tokens');
    });
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
  });
  row(client, 'extra fields', 'modelKwargs reach the model server', async () => {
    await chat({ modelKwargs: { top_k: 20, min_p: 0.05 } }).invoke('hi');
    expect(lastUpstreamBody()).toMatchObject({ top_k: 20, min_p: 0.05 });
  });
}

describe('@langchain/openai', () => {
  langchainRows('@langchain/openai', { streamUsage: true }, '/v1/chat/completions');
});

describe('@langchain/openai useResponsesApi', () => {
  langchainRows('@langchain/openai useResponsesApi', { useResponsesApi: true }, '/v1/responses');
  row('@langchain/openai useResponsesApi', 'conversation', 'earlier output items sent back in full', async () => {
    const chat = new ChatOpenAI({ model: 'auto', apiKey: m.key, configuration: { baseURL }, useResponsesApi: true });
    const first = await chat.invoke('My name is Ann.');
    const second = await chat.invoke([{ role: 'user', content: 'My name is Ann.' }, first, { role: 'user', content: 'Who am I?' }]);
    expect(second.text).toBe('Hello from the scripted upstream.');
    expect(lastUpstreamBody().messages).toEqual([
      { role: 'user', content: 'My name is Ann.' },
      { role: 'assistant', content: 'Hello from the scripted upstream.' },
      { role: 'user', content: 'Who am I?' },
    ]);
  });
});

describe('metering is the same for every client', () => {
  it('every request of this suite that reached the upstream left a ledger row', async () => {
    const rows = await ledgerRows(h.database, m.accountId, 1);
    expect(rows.length).toBeGreaterThan(40);
    expect(rows.every((row) => ['ok', 'refunded'].includes(row.status))).toBe(true);
    expect(rows.filter((row) => row.status === 'refunded').every((row) => row.cost_micros === '0')).toBe(true);
  });
});
