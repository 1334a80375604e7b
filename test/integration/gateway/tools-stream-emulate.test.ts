/**
 * Streaming with tools on chat completions works by default (issue 48 item 5): LangChain, the AI SDK, the
 * openai SDK's stream helpers and opencode stream every turn, tools included. svc calls the upstream without
 * streaming (as the spec wants tool-using requests) and streams the reply as the SDKs parse it
 * (CONFORMANCE "Streaming"): `role` in the first chunk only, each tool call's first fragment
 * `{index, id, type, function: {name, arguments: ""}}`, then its arguments. `gateway.toolsWithStream: reject`
 * stays available for an operator who wants the spec's 400.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { AIMessageChunk } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { isStepCount, streamText, tool, type LanguageModel } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startApp } from '../../helpers/app.ts';
import { createMember, ledgerRows, startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;
let baseURL: string;

beforeAll(async () => {
  // The default gateway config: nothing about tools or streams is set.
  h = await startHarness();
  m = await h.member({ planPackage: 'pro' });
  baseURL = `${h.app.url}/v1`;
});
afterAll(() => h?.close());

const weatherReply = 'It is sunny in Paris.';
const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }];

/** A model that calls get_weather (for Paris and Rome when asked for both), then answers from the tools' results. */
function weatherModel(body: Record<string, unknown>) {
  if (!Array.isArray(body.tools)) return undefined;
  const messages = body.messages as { role: string; content: unknown }[];
  if (messages.at(-1)?.role === 'tool') return { content: weatherReply };
  const both = JSON.stringify(messages).includes('and Rome');
  return { toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }, ...(both ? [{ name: 'get_weather', arguments: '{"city":"Rome"}' }] : [])] };
}

async function withModel<T>(run: () => Promise<T>): Promise<T> {
  h.upstream.setScript(weatherModel as never);
  try {
    return await run();
  } finally {
    h.upstream.setScript(null);
  }
}

describe('the stream on the wire', () => {
  it('role once, each tool call opened with id, type, name and empty arguments, then its arguments; the upstream asked without streaming; one ok stream row', async () => {
    const member = await h.member({ planPackage: 'pro' });
    const reply = await withModel(() =>
      fetch(`${baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-2.1', stream: true, tools, messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }] }),
      }),
    );
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toContain('text/event-stream');
    expect(h.upstream.bodies.at(-1)).toMatchObject({ stream: false, tools });
    const events = (await reply.text()).trim().split('\n\n');
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)) as { id: string; object: string; choices: { delta: Record<string, any>; finish_reason: string | null }[]; usage?: unknown });
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0]!.id && !('usage' in chunk))).toBe(true);
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta));
    expect(deltas.filter((delta) => 'role' in delta)).toEqual([expect.objectContaining({ role: 'assistant' })]);
    expect(deltas[0]!.role).toBe('assistant');
    expect(deltas.flatMap((delta) => delta.tool_calls ?? [])).toEqual([
      { index: 0, id: 'call_0_scripted', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
      { index: 1, id: 'call_1_scripted', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, function: { arguments: '{"city":"Rome"}' } },
    ]);
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(['tool_calls']);
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ product: 'chat', status: 'ok', stream: true, output_tokens: 16, estimated: false });
  });
});

describe('the openai SDK', () => {
  it('create({stream: true, tools}) chunks accumulate into the tool calls; the stream helper finishes with them', async () => {
    await withModel(async () => {
      const stream = await m.client.chat.completions.create({ model: 'auto', stream: true, stream_options: { include_usage: true }, tools, messages: [{ role: 'user', content: 'Weather in Paris and Rome?' }] });
      const calls: { id?: string; name: string; arguments: string }[] = [];
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        usage = chunk.usage ?? usage;
        for (const fragment of chunk.choices[0]?.delta.tool_calls ?? []) {
          const call = (calls[fragment.index] ??= { name: '', arguments: '' });
          if (fragment.id) call.id = fragment.id;
          call.name += fragment.function?.name ?? '';
          call.arguments += fragment.function?.arguments ?? '';
        }
      }
      expect(calls).toEqual([
        { id: 'call_0_scripted', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_1_scripted', name: 'get_weather', arguments: '{"city":"Rome"}' },
      ]);
      expect(usage?.completion_tokens).toBe(16);
      const helper = m.client.chat.completions.stream({ model: 'auto', tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
      const final = await helper.finalChatCompletion();
      expect(final.choices[0]!.finish_reason).toBe('tool_calls');
      expect(final.choices[0]!.message.tool_calls).toEqual([{ id: 'call_0_scripted', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    });
  });

  it('runTools with stream: true runs the tool and streams the answer', async () => {
    await withModel(async () => {
      const runner = m.client.chat.completions.runTools({
        model: 'auto',
        stream: true,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [
          {
            type: 'function',
            function: { name: 'get_weather', description: 'The weather in a city', parameters: tools[0]!.function.parameters, function: (args: { city: string }) => ({ city: args.city, sky: 'clear' }), parse: (text: string) => JSON.parse(text) as { city: string } },
          },
        ],
      });
      expect(await runner.finalContent()).toBe(weatherReply);
      expect(h.upstream.bodies.at(-1)!.messages).toContainEqual({ role: 'tool', tool_call_id: 'call_0_scripted', content: '{"city":"Paris","sky":"clear"}' });
    });
  });
});

const langchainWeather = langchainTool(async ({ city }: { city: string }) => JSON.stringify({ city, sky: 'clear' }), {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: z.object({ city: z.string() }),
});

describe('LangChain', () => {
  it('ChatOpenAI.bindTools().stream() yields chunks that concatenate into the tool calls', async () => {
    await withModel(async () => {
      const chat = new ChatOpenAI({ model: 'svc-2.1', apiKey: m.key, configuration: { baseURL }, streamUsage: true }).bindTools([langchainWeather]);
      let whole: AIMessageChunk | undefined;
      for await (const chunk of await chat.stream('Weather in Paris and Rome?')) whole = whole === undefined ? chunk : whole.concat(chunk);
      expect(whole!.tool_calls).toEqual([
        { id: 'call_0_scripted', name: 'get_weather', args: { city: 'Paris' }, type: 'tool_call' },
        { id: 'call_1_scripted', name: 'get_weather', args: { city: 'Rome' }, type: 'tool_call' },
      ]);
      expect(whole!.usage_metadata?.output_tokens).toBe(16);
      expect(h.upstream.bodies.at(-1)).toMatchObject({ stream: false });
    });
  });
});

describe('the AI SDK', () => {
  const getWeather = tool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => ({ city, sky: 'clear' }) });

  async function agentTurn(model: LanguageModel): Promise<{ calls: unknown[]; text: string }> {
    const calls: unknown[] = [];
    let text = '';
    const result = streamText({ model, prompt: 'Weather in Paris?', tools: { get_weather: getWeather }, stopWhen: isStepCount(3) });
    for await (const part of result.fullStream) {
      if (part.type === 'tool-call') calls.push(part.input);
      if (part.type === 'text-delta') text += part.text;
      if (part.type === 'error') throw part.error;
    }
    return { calls, text };
  }

  it('streamText with a tool (@ai-sdk/openai .chat()): the call, the tool run, the streamed answer', async () => {
    await withModel(async () => {
      expect(await agentTurn(createOpenAI({ baseURL, apiKey: m.key }).chat('auto'))).toEqual({ calls: [{ city: 'Paris' }], text: weatherReply });
    });
  });

  it('streamText with a tool (@ai-sdk/openai-compatible, as opencode configures it)', async () => {
    await withModel(async () => {
      const provider = createOpenAICompatible({ name: 'svc', baseURL, apiKey: m.key, includeUsage: true });
      expect(await agentTurn(provider('svc-2.1'))).toEqual({ calls: [{ city: 'Paris' }], text: weatherReply });
    });
  });
});

describe('gateway.toolsWithStream: reject', () => {
  it('stays available: tools with stream: true are then a 400 tools_require_non_streaming; without stream they work', async () => {
    const app = await startApp(h.mode.config, { config: { gateway: { toolsWithStream: 'reject' } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
    try {
      const member = await createMember(app, { planPackage: 'pro' });
      const refused = await member.client.chat.completions.create({ model: 'auto', stream: true, tools, messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error as InstanceType<typeof OpenAI.APIError>);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect(refused).toMatchObject({ status: 400, code: 'tools_require_non_streaming', param: 'tools' });
      const plain = await member.client.chat.completions.create({ model: 'auto', tools, messages: [{ role: 'user', content: 'hi' }] });
      expect(plain.choices[0]!.message.content).toBe('Hello from the scripted upstream.');
    } finally {
      await app.close();
    }
  });
});
