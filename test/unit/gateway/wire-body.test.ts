import { describe, expect, it } from 'vitest';
import { validateChatRequest, type ValidationLimits } from '../../../server/modules/gateway/chat.validate.ts';
import { spliceUpstreamBody } from '../../../server/modules/gateway/wire-body.ts';

const limits: ValidationLimits = { maxMessages: 100, maxOutputTokens: () => 4096, toolsWithStream: 'emulate' };

/**
 * As the chat surface and executor do it: the client's text parsed, its top-level fields kept, validated,
 * the model made the deployment's. Returns the spliced bytes (or null) and what serialising would send.
 */
function upstream(text: string, deploymentModel = 'qwen3-deploy', after?: (body: Record<string, unknown>) => void) {
  const body = JSON.parse(text) as Record<string, unknown>;
  const client = { raw: Buffer.from(text), sent: { ...body } };
  const validated = validateChatRequest(body, limits) as Record<string, unknown>;
  validated.model = deploymentModel;
  after?.(validated);
  return { spliced: spliceUpstreamBody(client, validated), serialised: JSON.stringify(validated) };
}

/** The spliced body must mean exactly what the serialised one means (key order aside). */
function expectSameMeaning(text: string, deploymentModel?: string) {
  const { spliced, serialised } = upstream(text, deploymentModel);
  expect(spliced).not.toBeNull();
  expect(JSON.parse(spliced!.toString('utf8'))).toStrictEqual(JSON.parse(serialised));
  return spliced!.toString('utf8');
}

const messages = [{ role: 'user', content: 'Hi' }];

describe('the upstream body spliced from the client bytes', () => {
  it('keeps the client bytes, swaps the model and appends the filled-in fields', () => {
    const text = JSON.stringify({ model: 'svc-2.1-fast', messages, max_tokens: 50 });
    const out = expectSameMeaning(text);
    expect(out.startsWith('{"model":"qwen3-deploy","messages":[{"role":"user","content":"Hi"}],"max_tokens":50,')).toBe(true);
    expect(out).toContain('"temperature":0.7');
    expect(out).toContain('"chat_template_kwargs":{"enable_thinking":false}');
  });

  it('finds the model anywhere at the top level, with whitespace and non-ASCII text around it', () => {
    expectSameMeaning(`{\n  "messages": [{"role": "user", "content": "你好，\\"model\\": 模型"}],\n  "model" :  "svc-2.1-fast" ,\n  "temperature": 1\n}\n`);
    expectSameMeaning(`{"messages":[{"role":"user","content":"a \\"model\\":\\"svc-2.1-fast\\" inside"}],"model":"svc-2.1-fast"}`);
  });

  it('sends the model bytes untouched when the deployment uses the same name', () => {
    const text = JSON.stringify({ model: 'svc-2.1-fast', messages, temperature: 0.2, top_p: 0.5, presence_penalty: 0, max_tokens: 9, chat_template_kwargs: { enable_thinking: true } });
    expect(expectSameMeaning(text, 'svc-2.1-fast')).toBe(text);
  });

  it('keeps a client stream_options that asks for usage only', () => {
    const text = JSON.stringify({ model: 'svc-2.1-fast', messages, stream: true, stream_options: { include_usage: true } });
    expect(expectSameMeaning(text)).toContain('"stream_options":{"include_usage":true}');
  });

  it('serialises instead when a second "model" key could be the one meant', () => {
    const nested = JSON.stringify({ model: 'svc-2.1-fast', messages, metadata: { model: 'svc-2.1-fast' } });
    expect(upstream(nested).spliced).toBeNull();
    expect(upstream('{"model":"svc-2.1-fast","messages":[{"role":"user","content":"Hi"}],"model":"svc-2.1-fast"}').spliced).toBeNull();
  });

  it('serialises instead when the text starts with a byte-order mark', () => {
    const text = JSON.stringify({ model: 'svc-2.1-fast', messages });
    const body = JSON.parse(text) as Record<string, unknown>;
    const client = { raw: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), sent: { ...body } };
    const validated = validateChatRequest(body, limits) as Record<string, unknown>;
    expect(spliceUpstreamBody(client, validated)).toBeNull();
    expect(spliceUpstreamBody({ raw: Buffer.from(` \n${text}`), sent: client.sent }, validated)).not.toBeNull();
  });

  it('serialises instead when the model is spelled with escapes or is not ASCII', () => {
    expect(upstream('{"model":"svc-2.1-f\\u0061st","messages":[{"role":"user","content":"Hi"}]}').spliced).toBeNull();
    expect(upstream(JSON.stringify({ model: '模型', messages })).spliced).toBeNull();
  });

  it('serialises instead when validation removed or replaced a field', () => {
    // max_completion_tokens becomes max_tokens; a null stream is dropped; kwargs without enable_thinking get a new object.
    expect(upstream(JSON.stringify({ model: 'svc-2.1-fast', messages, max_completion_tokens: 20 })).spliced).toBeNull();
    expect(upstream(JSON.stringify({ model: 'svc-2.1-fast', messages, stream: null })).spliced).toBeNull();
    expect(upstream(JSON.stringify({ model: 'svc-2.1-fast', messages, chat_template_kwargs: { foo: 1 } })).spliced).toBeNull();
    expect(upstream(JSON.stringify({ model: 'svc-2.1-fast', messages, temperature: null })).spliced).toBeNull();
  });

  it('serialises instead for the legacy function-calling API', () => {
    const legacy = JSON.stringify({ model: 'svc-2.1-fast', messages, functions: [{ name: 'f', parameters: {} }] });
    expect(upstream(legacy).spliced).toBeNull();
    const legacyTurn = JSON.stringify({
      model: 'svc-2.1-fast',
      messages: [...messages, { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, { role: 'function', name: 'f', content: '1' }],
    });
    expect(upstream(legacyTurn).spliced).toBeNull();
  });

  it('serialises instead when the executor replaced a field after validation', () => {
    const text = JSON.stringify({ model: 'svc-2.1-fast', messages, stream: true });
    expect(upstream(text, undefined, (body) => (body.stream = false)).spliced).toBeNull();
    expect(upstream(text, undefined, (body) => delete body.stream).spliced).toBeNull();
    // An addition by the executor is spliced like validation's.
    const { spliced, serialised } = upstream(text, undefined, (body) => (body.stream_options = { include_usage: true }));
    expect(JSON.parse(spliced!.toString())).toStrictEqual(JSON.parse(serialised));
  });
});
