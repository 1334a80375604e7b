import { describe, expect, it } from 'vitest';
import { fastChatReply, saneUsage } from '../../../server/modules/gateway/json-reply.ts';

const bounds = { promptBound: 1000, outputBound: 100 };
const message = (content: string) => ({ role: 'assistant', content, refusal: null });
const choice = (index: number, content: string) => ({ index, message: message(content), logprobs: null, finish_reason: 'stop' });

/** As the scripted bench upstream writes it: usage last. */
const scripted = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'qwen-deploy',
  choices: [choice(0, 'hello')],
  usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
});

/** As OpenAI writes it: usage with details, then service_tier and system_fingerprint. */
const openai = JSON.stringify({
  id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT',
  object: 'chat.completion',
  created: 1741569952,
  model: 'gpt-4.1-2025-04-14',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I assist you today?', refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' }],
  usage: {
    prompt_tokens: 19,
    completion_tokens: 10,
    total_tokens: 29,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
  service_tier: 'default',
  system_fingerprint: 'fp_3f58d112f7',
});

/** As vLLM writes it: its usage order, `prompt_tokens_details: null`, more top-level keys after usage. */
const vllm = JSON.stringify({
  id: 'chatcmpl-9f2c1c0e6b8a4d6e',
  object: 'chat.completion',
  created: 1741569952,
  model: 'Qwen/Qwen2.5-7B-Instruct',
  choices: [{ index: 0, message: { role: 'assistant', reasoning_content: null, content: 'Hi there.', refusal: null, tool_calls: [] }, logprobs: null, finish_reason: 'stop', stop_reason: null }],
  service_tier: null,
  system_fingerprint: null,
  usage: { prompt_tokens: 20, total_tokens: 24, completion_tokens: 4, prompt_tokens_details: null },
  prompt_logprobs: null,
  kv_transfer_params: null,
});

function fast(text: string) {
  const reply = fastChatReply(text, 'svc-chat', bounds);
  if (reply) expect(JSON.parse(reply.body)).toEqual({ ...JSON.parse(text), model: 'svc-chat' });
  return reply;
}

describe('fastChatReply', () => {
  it('forwards the scripted shape with the model swapped and its usage read', () => {
    const reply = fast(scripted);
    expect(reply?.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    expect(reply?.body.startsWith('{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"svc-chat","choices":[')).toBe(true);
  });

  it('takes an OpenAI-shaped reply: usage details, then service_tier and system_fingerprint', () => {
    expect(fast(openai)?.usage).toEqual({ prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 });
  });

  it('takes a vLLM-shaped reply: its usage order, null details, keys after usage', () => {
    expect(fast(vllm)?.usage).toEqual({ prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 });
  });

  it('reads the three counts in any order, only when they open the usage object', () => {
    const withUsage = (usage: string) => scripted.replace(/"usage":\{.*\}\}$/, `"usage":${usage}}`);
    expect(fast(withUsage('{"completion_tokens":3,"prompt_tokens":12,"total_tokens":15}'))?.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    expect(fastChatReply(withUsage('{"prompt_tokens_details":null,"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}'), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(withUsage('{"prompt_tokens":12,"prompt_tokens":3,"total_tokens":15}'), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(withUsage('{"prompt_tokens":012,"completion_tokens":3,"total_tokens":15}'), 'svc-chat', bounds)).toBeNull();
  });

  it('takes n = 2 choices', () => {
    const text = JSON.stringify({ ...JSON.parse(scripted), choices: [choice(0, 'a'), choice(1, 'b')] });
    expect(fast(text)?.usage.completion_tokens).toBe(3);
  });

  it('leaves a reply to the full parse when a choice lacks refusal or logprobs', () => {
    const two = JSON.parse(scripted) as { choices: unknown[] };
    two.choices = [choice(0, 'a'), { index: 1, message: { role: 'assistant', content: 'b' }, logprobs: null, finish_reason: 'stop' }];
    expect(fastChatReply(JSON.stringify(two), 'svc-chat', bounds)).toBeNull();
    two.choices = [choice(0, 'a'), { index: 1, message: message('b'), finish_reason: 'stop' }];
    expect(fastChatReply(JSON.stringify(two), 'svc-chat', bounds)).toBeNull();
  });

  it('does not count top_logprobs as logprobs; a logprobs object goes to the full parse', () => {
    const logprobs = { content: [{ token: 'hello', logprob: -0.1, bytes: [104], top_logprobs: [{ token: 'hello', logprob: -0.1, bytes: [104] }] }], refusal: null };
    const withLogprobs = JSON.stringify({ ...JSON.parse(scripted), choices: [{ ...choice(0, 'hello'), logprobs }] });
    expect(fastChatReply(withLogprobs, 'svc-chat', bounds)).toBeNull();
    // Without its own refusal key the refusal count would match: it is the logprobs that must be null.
    const noRefusal = JSON.stringify({ ...JSON.parse(scripted), choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, logprobs, finish_reason: 'stop' }] });
    expect(fastChatReply(noRefusal, 'svc-chat', bounds)).toBeNull();
  });

  it('never reads usage or keys out of text inside a string', () => {
    const forged = '"usage":{"prompt_tokens":999,"completion_tokens":99,"total_tokens":1098},"refusal":null,"finish_reason":"stop"}';
    const withUsage = JSON.stringify({ ...JSON.parse(scripted), choices: [choice(0, forged)] });
    expect(withUsage).toContain('\\"usage\\":{\\"prompt_tokens\\":999');
    expect(fast(withUsage)?.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    const { usage: _, ...noUsage } = JSON.parse(withUsage) as Record<string, unknown>;
    expect(fastChatReply(JSON.stringify(noUsage), 'svc-chat', bounds)).toBeNull();
  });

  it('leaves truncated, non-JSON and choiceless bodies to the full parse (which answers 502)', () => {
    for (const cut of [scripted.length - 1, scripted.length - 2, scripted.indexOf('"usage"') + 20, 60]) expect(fastChatReply(scripted.slice(0, cut), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(openai.replace('"service_tier"', '"service_tier":{}}'), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply('<html>Bad Gateway</html>', 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply('', 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply('{"id":"x","object":"chat.completion","created":1,"model":"m","usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}', 'svc-chat', bounds)).toBeNull();
  });

  it('leaves absent, null, out-of-bounds or inconsistent usage to the full parse (which estimates)', () => {
    const withUsage = (usage: unknown) => JSON.stringify({ ...JSON.parse(scripted), usage });
    expect(fastChatReply(withUsage(null), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(withUsage({ prompt_tokens: 1001, completion_tokens: 3, total_tokens: 1004 }), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(withUsage({ prompt_tokens: 12, completion_tokens: 101, total_tokens: 113 }), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(withUsage({ prompt_tokens: -1, completion_tokens: 3, total_tokens: 2 }), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(withUsage({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 99 }), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(withUsage({ prompt_tokens: 12.5, completion_tokens: 3, total_tokens: 15.5 }), 'svc-chat', bounds)).toBeNull();
  });

  it('leaves anything not in the usual shape to the full parse', () => {
    const parsed = JSON.parse(scripted) as Record<string, unknown>;
    expect(fastChatReply(JSON.stringify(parsed, null, 2), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(JSON.stringify({ ...parsed, object: 'chat.completion.chunk' }), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(JSON.stringify({ ...parsed, id: 'a"b' }), 'svc-chat', bounds)).toBeNull();
    const { id, ...rest } = parsed;
    expect(fastChatReply(JSON.stringify({ ...rest, id }), 'svc-chat', bounds)).toBeNull();
    expect(fastChatReply(scripted.replace('"usage":', '"model":"qwen-deploy","usage":'), 'svc-chat', bounds)).toBeNull();
  });

  it('names the model as JSON', () => {
    expect(fast(scripted.replace('qwen-deploy', 'a'))?.body).toContain('"model":"svc-chat"');
    expect(JSON.parse(fastChatReply(scripted, 'q"uote', bounds)!.body).model).toBe('q"uote');
  });
});

describe('saneUsage', () => {
  it('keeps counts within the bounds and recomputes the total', () => {
    expect(saneUsage({ prompt_tokens: 1000, completion_tokens: 100, total_tokens: 5 }, bounds)).toEqual({ prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 });
    expect(saneUsage({ prompt_tokens: 1, completion_tokens: '2' }, bounds)).toBeNull();
    expect(saneUsage(undefined, bounds)).toBeNull();
  });
});
