import { describe, expect, it } from 'vitest';
import type { AppError } from '../../../server/errors/app-error.ts';
import { legacyFunctions, MAX_JSON_DEPTH, validateChatRequest } from '../../../server/modules/gateway/chat.validate.ts';
import { loweredFrom } from '../../../server/modules/gateway/output-cap.ts';

const limits = { maxMessages: 3, maxOutputTokens: (model: string) => (model === 'auto' ? 8192 : model === 'small' ? 100 : undefined) };
const user = [{ role: 'user', content: 'hi' }];

function fails(body: unknown): AppError {
  try {
    validateChatRequest(body, limits);
  } catch (error) {
    return error as AppError;
  }
  throw new Error('expected a validation error');
}

describe('validateChatRequest', () => {
  it('applies the recommended values and defaults the model to auto', () => {
    expect(validateChatRequest({ messages: user }, limits)).toEqual({
      model: 'auto',
      messages: user,
      temperature: 0.7,
      top_p: 0.8,
      presence_penalty: 1.5,
      max_tokens: 1024,
      chat_template_kwargs: { enable_thinking: false },
    });
  });

  it('keeps what the client sent; thinking only when asked', () => {
    const body = validateChatRequest({ model: 'auto', messages: user, temperature: 0, max_completion_tokens: 10, reasoning_effort: 'high' }, limits);
    expect(body).toMatchObject({ temperature: 0, max_tokens: 10, chat_template_kwargs: { enable_thinking: true } });
    expect(body).not.toHaveProperty('max_completion_tokens');
    expect(validateChatRequest({ messages: user, chat_template_kwargs: { enable_thinking: true } }, limits).chat_template_kwargs).toEqual({ enable_thinking: true });
  });

  it('names the param at fault', () => {
    expect(fails({ messages: user, temperature: 3 }).options.param).toBe('temperature');
    expect(fails({ messages: user, top_p: -1 }).options.param).toBe('top_p');
    expect(fails({ messages: user, max_tokens: 1.5 }).options.param).toBe('max_tokens');
    expect(fails({ messages: [] }).options.param).toBe('messages');
    expect(fails({ messages: [...user, ...user, ...user, ...user] }).options.param).toBe('messages');
    expect(fails({ messages: [{ role: 'wizard', content: 'x' }] }).options.param).toBe('messages[0].role');
    expect(fails({ messages: [{ role: 'user', content: 5 }] }).options.param).toBe('messages[0].content');
    expect(fails({ messages: user, stop: [1] }).options.param).toBe('stop');
    expect(fails({ messages: user, stream_options: { include_usage: true } }).options.param).toBe('stream_options');
    expect(fails([]).code).toBe('invalid_request');
  });

  it('checks content parts, tool calls and the tool fields that the upstream would otherwise refuse as a 502', () => {
    const parts = (content: unknown) => fails({ messages: [{ role: 'user', content }] }).options.param;
    expect(parts([{ type: 'text' }])).toBe('messages[0].content[0].text');
    expect(parts([{ type: 'text', text: 'a' }, { type: 'bogus' }])).toBe('messages[0].content[1].type');
    expect(parts(['x'])).toBe('messages[0].content[0]');
    expect(parts([{ type: 'image_url', image_url: {} }])).toBe('messages[0].content[0].image_url.url');
    expect(fails({ messages: [{ role: 'user', content: 'x', name: 5 }] }).options.param).toBe('messages[0].name');
    expect(fails({ messages: [{ role: 'assistant', content: null, tool_calls: 5 }] }).options.param).toBe('messages[0].tool_calls');
    expect(fails({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] }] }).options.param).toBe(
      'messages[0].tool_calls[0].function.arguments',
    );
    const tool = { type: 'function', function: { name: 'f', parameters: { type: 'object' } } };
    expect(fails({ messages: user, tools: [{ ...tool, function: { name: 'f', parameters: 5 } }] }).options.param).toBe('tools[0].function.parameters');
    expect(fails({ messages: user, tools: [tool], tool_choice: 5 }).options.param).toBe('tool_choice');
    expect(fails({ messages: user, tools: [tool], tool_choice: { type: 'function', function: {} } }).options.param).toBe('tool_choice');
    expect(fails({ messages: user, logit_bias: 'x' }).options.param).toBe('logit_bias');
    expect(fails({ messages: user, logprobs: 'yes' }).options.param).toBe('logprobs');
    expect(fails({ messages: user, top_logprobs: 99 }).options.param).toBe('top_logprobs');
    expect(fails({ messages: user, parallel_tool_calls: 'x' }).options.param).toBe('parallel_tool_calls');
    // What the SDKs send stays valid.
    const ok = {
      messages: [
        { role: 'user', name: 'ann', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: '{"ok":true}' }] },
      ],
      tools: [tool],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: true,
      logprobs: true,
      top_logprobs: 2,
      logit_bias: { '50256': -100 },
      reasoning_effort: null,
      user: 'u-1',
    };
    expect(() => validateChatRequest(ok, limits)).not.toThrow();
    expect(() => validateChatRequest({ messages: user, tools: [tool], tool_choice: 'required' }, limits)).not.toThrow();
  });

  it('takes tools with stream: true (served by emulation), unless toolsWithStream is reject', () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: {} } }];
    expect(validateChatRequest({ messages: user, stream: true, tools }, limits)).toMatchObject({ stream: true, tools });
    expect(validateChatRequest({ messages: user, tools }, { ...limits, toolsWithStream: 'reject' }).tools).toEqual(tools);
    expect(() => validateChatRequest({ messages: user, stream: true, tools }, { ...limits, toolsWithStream: 'reject' })).toThrow(expect.objectContaining({ code: 'tools_require_non_streaming' }));
  });

  it("lowers an output cap above the model's to it, marked; refuses it under maxTokens: reject", () => {
    const lowered = validateChatRequest({ model: 'small', messages: user, max_tokens: 101 }, limits);
    expect(lowered.max_tokens).toBe(100);
    expect(lowered[loweredFrom]).toBe(101);
    expect(JSON.stringify(lowered)).not.toContain('101');
    const newer = validateChatRequest({ model: 'small', messages: user, max_completion_tokens: 5000 }, limits);
    expect(newer).toMatchObject({ max_tokens: 100 });
    expect(newer[loweredFrom]).toBe(5000);
    const within = validateChatRequest({ model: 'small', messages: user, max_tokens: 100 }, limits);
    expect(within[loweredFrom]).toBeUndefined();
    expect(() => validateChatRequest({ model: 'small', messages: user, max_tokens: 101 }, { ...limits, maxTokens: 'reject' })).toThrow(
      expect.objectContaining({ code: 'invalid_request', options: expect.objectContaining({ param: 'max_tokens' }), message: 'max_tokens must be at most 100 for model small.' }),
    );
  });

  it('forwards the fields it does not own, as sent', () => {
    const extras = {
      store: true,
      metadata: { run: '7' },
      service_tier: 'auto',
      modalities: ['text'],
      prediction: { type: 'content', content: 'x' },
      web_search_options: {},
      verbosity: 'low',
      prompt_cache_key: 'k',
      safety_identifier: 's',
      top_k: 20,
      min_p: 0.05,
      repetition_penalty: 1.1,
    };
    expect(validateChatRequest({ messages: user, ...extras }, limits)).toMatchObject(extras);
  });

  it('turns the legacy functions API into tools, and marks the body for a legacy reply', () => {
    const fn = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
    const body = validateChatRequest(
      {
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { role: 'function', name: 'get_weather', content: 'sunny' },
        ],
        functions: [fn],
        function_call: { name: 'get_weather' },
      },
      limits,
    );
    expect(body.tools).toEqual([{ type: 'function', function: fn }]);
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(body).not.toHaveProperty('functions');
    expect(body).not.toHaveProperty('function_call');
    expect(body.messages[1]).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'call_legacy_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] });
    expect(body.messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_legacy_1', content: 'sunny' });
    expect(body[legacyFunctions]).toBe(true);
    // The marker is a symbol: it never reaches the upstream.
    expect(JSON.stringify(body)).not.toContain('legacy"');
    expect(validateChatRequest({ messages: user, functions: [fn], function_call: 'auto' }, limits).tool_choice).toBe('auto');
    expect(fails({ messages: user, functions: [fn], tools: [{ type: 'function', function: fn }] }).options.param).toBe('functions');
    expect(fails({ messages: user, functions: [{ description: 'no name' }] }).options.param).toBe('functions[0]');
    expect(fails({ messages: user, function_call: 7 }).options.param).toBe('function_call');
  });

  it('refuses JSON nested deeper than it can serialize, anywhere in the body', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(fails({ messages: user, metadata: deep }).message).toContain(`${MAX_JSON_DEPTH} levels`);
    expect(fails({ messages: [{ role: 'user', content: [{ type: 'text', text: 'x', extra: deep }] }] }).code).toBe('invalid_request');
    let fine: unknown = 'leaf';
    for (let i = 0; i < 50; i++) fine = { a: fine };
    expect(() => validateChatRequest({ messages: user, metadata: fine }, limits)).not.toThrow();
  });
});
