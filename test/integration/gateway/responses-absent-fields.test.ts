/**
 * A field sent as `null`, or a free-text one as `""`, is a field not sent — as OpenAI reads them — on
 * `POST /v1/responses` and `POST /v1/chat/completions`: every optional request field is sent with each value
 * and must be answered 200 where OpenAI accepts it (nothing `null` reaching the upstream), and 400 naming the
 * field where OpenAI refuses it (an empty model, id, number, flag, enum value or object).
 *
 * Which fields OpenAI takes as null: the request types of the official SDK (openai 6.49, generated from
 * OpenAI's API definition) mark them `| null`; `user` is not marked, yet OpenAI accepts `user: None` from
 * the Python SDK (LlamaIndex sends it), as it does every optional field. `""` is accepted for free text
 * (`instructions`: LlamaIndex's `OpenAIResponses` sends it; `user`, `prompt_cache_key`,
 * `safety_identifier`). Fields svc only ignores (`truncation`, `include`, `service_tier`, …) are not asked
 * about `""`: svc accepts anything there.
 */
import { OpenAIResponses } from '@llamaindex/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness, type Member } from './harness.ts';

let h: Harness;
let m: Member;

beforeAll(async () => {
  h = await startHarness();
  m = await h.member({ planPackage: 'pro' });
});
afterAll(() => h?.close());

async function post(path: string, body: unknown): Promise<{ status: number; param: string | null }> {
  const reply = await fetch(`${h.app.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${m.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await reply.json().catch(() => null)) as { error?: { param?: string } } | null;
  if (reply.status === 200) await new Promise((resolve) => setImmediate(resolve));
  return { status: reply.status, param: json?.error?.param ?? null };
}

/** Every field of the body the upstream got that is null. */
function nullsUpstream(): string[] {
  const body = h.upstream.bodies.at(-1)!;
  return Object.keys(body).filter((field) => body[field] === null);
}

const responsesNullable = [
  'background',
  'context_management',
  'conversation',
  'include',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'moderation',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_retention',
  'reasoning',
  'safety_identifier',
  'service_tier',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
];
const responsesEmptyAccepted = ['instructions', 'user', 'prompt_cache_key', 'safety_identifier'];
const responsesEmptyRefused = ['model', 'previous_response_id', 'tool_choice', 'tools', 'text', 'reasoning', 'metadata', 'temperature', 'top_p', 'max_output_tokens', 'stream', 'store', 'parallel_tool_calls', 'conversation', 'prompt'];

const chatNullable = [
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'chat_template_kwargs',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
];
const chatEmptyAccepted = ['user', 'prompt_cache_key', 'safety_identifier'];
const chatEmptyRefused = [
  'model',
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'seed',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'reasoning_effort',
  'response_format',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'chat_template_kwargs',
];

describe('POST /v1/responses', () => {
  const base = { model: 'auto', input: 'Hello.' };

  it.each(responsesNullable)('%s: null is as if not sent', async (field) => {
    expect(await post('/v1/responses', { ...base, [field]: null }), field).toEqual({ status: 200, param: null });
    expect(nullsUpstream()).toEqual([]);
  });

  it.each(responsesEmptyAccepted)('%s: "" is as if not sent', async (field) => {
    expect(await post('/v1/responses', { ...base, [field]: '' })).toEqual({ status: 200, param: null });
    expect(h.upstream.bodies.at(-1)![field === 'instructions' ? 'messages' : field]).toEqual(field === 'instructions' ? [{ role: 'user', content: 'Hello.' }] : undefined);
  });

  it.each(responsesEmptyRefused)('%s: "" is refused, naming the field', async (field) => {
    const reply = await post('/v1/responses', { ...base, [field]: '' });
    expect(reply.status, field).toBe(400);
    expect(reply.param, field).toMatch(new RegExp(`^${field}`));
  });

  it('LlamaIndex OpenAIResponses request as it sends it: answered', async () => {
    // `_get_model_kwargs` of llama-index-llms-openai's OpenAIResponses with its defaults.
    const body = { model: 'auto', include: null, instructions: '', max_output_tokens: null, metadata: null, previous_response_id: null, store: false, temperature: 0.1, tools: [], top_p: 1, truncation: 'disabled', user: null, input: [{ role: 'user', content: 'Hi' }], stream: false };
    expect(await post('/v1/responses', body)).toEqual({ status: 200, param: null });
    expect(h.upstream.bodies.at(-1)).toMatchObject({ messages: [{ role: 'user', content: 'Hi' }], temperature: 0.1, top_p: 1 });
    expect(nullsUpstream()).toEqual([]);
  });
  it('LlamaIndex OpenAIResponses (the TypeScript client) chats and streams', async () => {
    const llm = new OpenAIResponses({ model: 'auto', apiKey: m.key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
    const reply = await llm.chat({ messages: [{ role: 'user', content: 'Hi' }] });
    expect(String(reply.message.content).length).toBeGreaterThan(0);
    let streamed = '';
    for await (const chunk of await llm.chat({ messages: [{ role: 'user', content: 'Hi again' }], stream: true })) streamed += chunk.delta;
    expect(streamed.length).toBeGreaterThan(0);
    expect(nullsUpstream()).toEqual([]);
  });
});

describe('POST /v1/chat/completions', () => {
  const base = { model: 'auto', messages: [{ role: 'user', content: 'Hello.' }] };

  it.each(chatNullable)('%s: null is as if not sent', async (field) => {
    expect(await post('/v1/chat/completions', { ...base, [field]: null }), field).toEqual({ status: 200, param: null });
    expect(nullsUpstream()).toEqual([]);
  });

  it.each(chatEmptyAccepted)('%s: "" is as if not sent', async (field) => {
    expect(await post('/v1/chat/completions', { ...base, [field]: '' })).toEqual({ status: 200, param: null });
    expect(h.upstream.bodies.at(-1)![field]).toBeUndefined();
  });

  it.each(chatEmptyRefused)('%s: "" is refused, naming the field', async (field) => {
    const reply = await post('/v1/chat/completions', { ...base, [field]: '' });
    expect(reply.status, field).toBe(400);
    expect(reply.param, field).toMatch(new RegExp(`^${field}`));
  });

  it('required fields stay required: messages null or "" is a 400', async () => {
    expect(await post('/v1/chat/completions', { model: 'auto', messages: null })).toEqual({ status: 400, param: 'messages' });
    expect(await post('/v1/chat/completions', { model: 'auto', messages: '' })).toEqual({ status: 400, param: 'messages' });
    expect(await post('/v1/responses', { model: 'auto', input: null })).toEqual({ status: 400, param: 'input' });
  });
});
