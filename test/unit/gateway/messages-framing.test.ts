import { describe, expect, it } from 'vitest';
import { MessagesFraming } from '../../../server/modules/gateway/messages.framing.ts';
import type { ChatCompletion } from '../../../server/modules/gateway/framing.ts';
import { errorShapeOf } from '../../../server/http/envelope.ts';

const head = { id: 'up-1', object: 'chat.completion.chunk', created: 7, model: 'qwen' };
const chunk = (delta: object, finish: string | null = null, extra: object = {}) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish, ...extra }], usage: null })}\n\n`;

function framing(stopSequences: string[] = []) {
  return new MessagesFraming({ id: 'msg_test', showThinking: true, stopSequences });
}

function events(text: string): { type: string; [key: string]: any }[] {
  return text
    .trim()
    .split('\n\n')
    .map((block) => {
      const [event, data] = block.split('\n');
      const parsed = JSON.parse(data!.slice(6)) as { type: string };
      expect(event).toBe(`event: ${parsed.type}`);
      return parsed;
    });
}

/** The text the stream's text deltas carry. */
const textOf = (list: { type: string; delta?: { type: string; text?: string } }[]) => list.filter((e) => e.delta?.type === 'text_delta').map((e) => e.delta!.text).join('');

describe('the Messages stream', () => {
  it('moves escaped text as it is (quotes, backslashes, unicode, escapes), the same as a parse would give, whatever the reads', () => {
    const texts = ['plain ', 'quote " and \\ backslash ', 'tab\t new\nline ', 'ünïcödé 漢字 😀 ', '\u0001 control', ''];
    const upstream = chunk({ role: 'assistant', content: '' }) + texts.map((text) => chunk({ content: text })).join('') + chunk({}, 'stop') + 'data: [DONE]\n\n';
    for (const size of [upstream.length, 64, 7, 1]) {
      const stream = framing().stream('svc-2.1');
      const bytes = Buffer.from(upstream);
      let out = '';
      for (let i = 0; i < bytes.length; i += size) out += stream.push(bytes.subarray(i, i + size)) as string;
      out += stream.end({ prompt_tokens: 5, completion_tokens: 6 }) as string;
      const list = events(out);
      expect(textOf(list)).toBe(texts.join(''));
      expect(list.map((e) => e.type)).toEqual(['message_start', 'content_block_start', 'ping', ...texts.slice(0, -1).map(() => 'content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop']);
      expect(list.at(-2)).toMatchObject({ delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 5, output_tokens: 6 } });
      expect(stream.done).toBe(true);
    }
  });

  it('events read one at a time (as model servers send them) go the byte path, and come out as the text path frames them', () => {
    const texts = ['plain ', 'quote " and \\ backslash ', 'ünïcödé 漢字 😀 ', '', 'end'];
    const events = [
      chunk({ role: 'assistant', content: '' }),
      ...texts.map((text) => chunk({ content: text })),
      chunk({ reasoning_content: 'thinks' }),
      chunk({ content: 'after' }, null, { stop_reason: null }),
      chunk({ content: 'x' }, null, { index: 1 }),
      chunk({ content: 'last' }, 'stop'),
      'data: [DONE]\n\n',
    ];
    const whole = framing().stream('svc-2.1');
    const expected = `${whole.push(Buffer.from(events.join('')))}${whole.end({ prompt_tokens: 5, completion_tokens: 6 })}`;
    const stream = framing().stream('svc-2.1');
    let out = '';
    let buffers = 0;
    for (const event of events) {
      const sent = stream.push(Buffer.from(event), false);
      if (Buffer.isBuffer(sent)) buffers++;
      out += sent.toString();
    }
    out += stream.end({ prompt_tokens: 5, completion_tokens: 6 });
    expect(out).toBe(expected);
    // Every text after the first, but the empty one, the one after thinking reopens text, another choice's and the finish.
    expect(buffers).toBe(texts.length - 2);
    expect(stream.deltas).toBe(whole.deltas);
    expect(stream.producedText().join('')).toBe(whole.producedText().join(''));
    // Framed as HTTP chunks when asked: the same event between a size line and CRLF.
    const framed = framing().stream('svc-2.1');
    framed.push(Buffer.from(events[0]! + events[1]!));
    const frame = framed.push(Buffer.from(events[2]!), true) as Buffer;
    const body = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"quote \\" and \\\\ backslash "}}\n\n';
    expect(frame.toString()).toBe(`${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n`);
  });

  it('a chunk that carries more than text (here with its finish) is parsed, not dropped', () => {
    const stream = framing().stream('svc-2.1');
    const out = (stream.push(Buffer.from(chunk({ role: 'assistant', content: 'a' }) + chunk({ content: 'b' }, 'length'))) as string) + stream.end(null);
    const list = events(out);
    expect(textOf(list)).toBe('ab');
    expect(list.at(-2)).toMatchObject({ delta: { stop_reason: 'max_tokens' } });
  });

  it("names the stop sequence the upstream met (vLLM's stop_reason), else end_turn", () => {
    const stream = framing(['END']).stream('svc-2.1');
    const out = (stream.push(Buffer.from(chunk({ role: 'assistant', content: 'x' }) + chunk({}, 'stop', { stop_reason: 'END' }))) as string) + stream.end(null);
    expect(events(out).at(-2)).toMatchObject({ delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' } });
  });

  it('a tool call whose arguments are not a JSON object is sent with input {} (clients parse input as an object)', () => {
    const stream = framing().stream('svc-2.1');
    const calls = [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }];
    let out = stream.push(Buffer.from(chunk({ role: 'assistant', content: null, tool_calls: calls }))) as string;
    out += stream.push(Buffer.from(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"broken' } }] }) + chunk({}, 'tool_calls'))) as string;
    const list = events(out + stream.end(null));
    expect(list.find((e) => e.delta?.type === 'input_json_delta')).toMatchObject({ delta: { partial_json: '{}' } });
    expect(list.at(-2)).toMatchObject({ delta: { stop_reason: 'tool_use' } });
  });

  it('a failure after the stream began is one Anthropic error event', () => {
    const stream = framing().stream('svc-2.1');
    expect(stream.fail({ message: 'The model server failed mid-stream.', type: 'api_error', code: 'upstream_unavailable', param: null })).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"The model server failed mid-stream."}}\n\n',
    );
  });
});

describe('the Messages reply', () => {
  it('text, tool_use (input parsed) and usage; tool calls make the stop reason tool_use', () => {
    const completion: ChatCompletion = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'svc-2.1',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Checking.', reasoning_content: 'hmm', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] } }],
      usage: { prompt_tokens: 3, completion_tokens: 4 },
    };
    expect(JSON.parse(framing().json(completion))).toEqual({
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: 'svc-2.1',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: '' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 3, output_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });
});

describe('the error shape by route', () => {
  it('Anthropic for /v1/messages (any query, count_tokens) and for /v1/models asked with anthropic-version; svc elsewhere', () => {
    for (const url of ['/v1/messages', '/v1/messages?beta=true', '/v1/messages/count_tokens']) expect(errorShapeOf(url, {})).toBe('anthropic');
    expect(errorShapeOf('/v1/models', { 'anthropic-version': '2023-06-01' })).toBe('anthropic');
    for (const url of ['/v1/messagesx', '/v1/models', '/v1/chat/completions', '/api/membership/me']) expect(errorShapeOf(url, {})).toBe('svc');
  });
});
