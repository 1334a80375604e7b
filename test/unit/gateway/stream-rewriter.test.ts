import { describe, expect, it } from 'vitest';
import { StreamRewriter } from '../../../server/modules/gateway/stream-rewriter.ts';

const chunk = (delta: object, extra: object = {}) => `data: ${JSON.stringify({ id: 'up-1', object: 'chat.completion.chunk', created: 7, model: 'qwen', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;

function events(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      const data = event.slice(6);
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}

describe('StreamRewriter', () => {
  it('keeps role in the first chunk only, renames the model, handles split bytes and drops non-data lines', () => {
    const rewriter = new StreamRewriter('svc-2.1', false);
    const upstream = Buffer.from(
      `: keep-alive\n\nevent: message\nid: 3\n${chunk({ role: 'assistant', content: '' })}${chunk({ role: 'assistant', content: 'héllo' })}${chunk({ content: ' wörld' }, { usage: { prompt_tokens: 1, completion_tokens: 2 } })}data: [DONE]\n\n`,
    );
    let out = '';
    for (let i = 0; i < upstream.length; i += 7) out += rewriter.push(upstream.subarray(i, i + 7)); // split mid-character
    out += rewriter.end(rewriter.usage);
    const list = events(out) as { model: string; choices: { delta: { role?: string; content?: string } }[]; usage?: unknown }[];
    expect(list.at(-1)).toBe('[DONE]');
    const chunks = list.slice(0, -1);
    expect(chunks).toHaveLength(3);
    expect(chunks.map((c) => c.choices[0]!.delta.role)).toEqual(['assistant', undefined, undefined]);
    expect(chunks.map((c) => c.choices[0]!.delta.content).join('')).toBe('héllo wörld');
    expect(chunks.every((c) => c.model === 'svc-2.1' && !('usage' in c))).toBe(true);
    expect(rewriter.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2 });
    expect(rewriter.producedText().join('')).toBe('héllo wörld');
  });

  it('with n > 1: role once per choice, in its first delta (openai-node needs it to finish)', () => {
    const rewriter = new StreamRewriter('svc', false);
    const choice = (index: number, delta: object) => `data: ${JSON.stringify({ id: 'up-1', object: 'chat.completion.chunk', created: 7, model: 'qwen', choices: [{ index, delta, finish_reason: null }] })}\n\n`;
    const out = rewriter.pushText(
      Buffer.from(choice(0, { role: 'assistant', content: '' }) + choice(1, { role: 'assistant', content: '' }) + choice(0, { content: 'a' }) + choice(1, { role: 'assistant', content: 'b' })),
    );
    const list = events(out) as { choices: { index: number; delta: { role?: string } }[] }[];
    expect(list.map((c) => [c.choices[0]!.index, c.choices[0]!.delta.role])).toEqual([
      [0, 'assistant'],
      [1, 'assistant'],
      [0, undefined],
      [1, undefined],
    ]);
  });

  it('with include_usage: usage null on chunks, one final choices-less usage chunk', () => {
    const rewriter = new StreamRewriter('svc', true);
    let out = rewriter.pushText(Buffer.from(chunk({ content: 'a' }) + `data: ${JSON.stringify({ id: 'up-1', created: 7, choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } })}\n\n`));
    out += rewriter.end(rewriter.usage);
    const list = events(out) as { choices: unknown[]; usage: unknown; id: string }[];
    expect(list[0]!.usage).toBeNull();
    expect(list[1]).toMatchObject({ id: 'up-1', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
    expect(list[2]).toBe('[DONE]');
  });

  it('stops at an upstream error event', () => {
    const rewriter = new StreamRewriter('svc', false);
    const out = rewriter.pushText(Buffer.from(chunk({ content: 'a' }) + 'data: {"error":{"message":"boom","type":"server_error"}}\n\n' + chunk({ content: 'b' })));
    expect(events(out)).toHaveLength(1);
    expect(rewriter.upstreamError).toMatchObject({ message: 'boom' });
  });

  it('fast path: later chunks are re-framed without parsing, identically to the full path', () => {
    for (const [includeUsage, upstreamUsage] of [
      [false, {}],
      [true, {}],
      [false, { usage: null }], // OpenAI-style: usage null on every chunk (we always ask the upstream for usage)
      [true, { usage: null }],
    ] as const) {
      const rewriter = new StreamRewriter('svc-2.1-fast', includeUsage);
      const upstream =
        chunk({ role: 'assistant', content: '' }, upstreamUsage) +
        chunk({ content: 'a"b' }, upstreamUsage) +
        chunk({ content: ' \\c' }, upstreamUsage) +
        `data: ${JSON.stringify({ id: 'up-1', object: 'chat.completion.chunk', created: 7, model: 'qwen', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n` +
        'data: [DONE]\n\n';
      const list = events(rewriter.pushText(Buffer.from(upstream)) + rewriter.end(null)) as Record<string, unknown>[];
      expect(list).toHaveLength(5);
      for (const event of list.slice(0, 4)) {
        expect(event).toMatchObject({ id: 'up-1', object: 'chat.completion.chunk', created: 7, model: 'svc-2.1-fast' });
        expect('usage' in event).toBe(includeUsage);
        if (includeUsage) expect(event.usage).toBeNull();
      }
      expect(rewriter.finished).toBe(true);
      expect(rewriter.deltas).toBe(2);
      expect(rewriter.producedText().join('')).toBe('a"b \\c');
    }
  });

  it('byte path: one event per read is re-framed on the bytes, exactly as the text path frames it', () => {
    const content = ['', 'a"b', ' \\c', ' é😀', '\u0000\n', ' done'];
    for (const [includeUsage, upstreamUsage] of [
      [false, {}],
      [true, {}],
      [false, { usage: null }],
      [true, { usage: null }],
    ] as const) {
      const reads = [
        chunk({ role: 'assistant', content: content[0] }, upstreamUsage),
        ...content.slice(1).map((text) => chunk({ content: text }, upstreamUsage)),
        `data: ${JSON.stringify({ id: 'up-1', object: 'chat.completion.chunk', created: 7, model: 'qwen', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], ...upstreamUsage })}\n\n`,
        'data: [DONE]\n\n',
      ].map((text) => Buffer.from(text));
      const bytes = new StreamRewriter('svc-2.1-fast', includeUsage);
      const text = new StreamRewriter('svc-2.1-fast', includeUsage);
      const out = reads.map((read) => bytes.push(read));
      // After the first (parsed) event, every content chunk took the byte path.
      expect(out.slice(1, content.length).every((sent) => Buffer.isBuffer(sent))).toBe(true);
      expect(out.map((sent) => sent.toString()).join('')).toBe(reads.map((read) => text.pushText(read)).join(''));
      expect([bytes.finished, bytes.done, bytes.deltas]).toEqual([true, true, 5]);
      expect(bytes.producedText().join('')).toBe(content.join(''));
      expect(bytes.producedText().join('')).toBe(text.producedText().join(''));
    }
  });

  it('byte path, chunked: each event comes written into its HTTP chunk (size line, event, CRLF); the text path is never framed', () => {
    const reads = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'a' }), chunk({ content: 'é😀'.repeat(700) }), chunk({ content: 'b' }) + chunk({ content: 'c' })].map((text) => Buffer.from(text));
    const framed = new StreamRewriter('svc-2.1-fast', true);
    const plain = new StreamRewriter('svc-2.1-fast', true);
    const out = reads.map((read) => framed.push(read, true));
    const expected = reads.map((read) => plain.push(read));
    expect(out.map((sent) => Buffer.isBuffer(sent))).toEqual([false, true, true, false]);
    for (const [i, sent] of out.entries()) {
      const event = Buffer.from(expected[i]!);
      // The 4 KiB+ event's size line is made on the spot (lines up to 4 KiB are made once).
      expect(Buffer.isBuffer(sent) ? sent.toString('latin1') : sent).toBe(Buffer.isBuffer(sent) ? `${event.length.toString(16)}\r\n${event.toString('latin1')}\r\n` : expected[i]);
    }
    expect(Buffer.from(expected[2]!).length).toBeGreaterThan(4096);
    expect(framed.producedText().join('')).toBe(`a${'é😀'.repeat(700)}bc`);
  });

  it('byte path: a read that is not one whole event goes through the text path, and the next whole one takes the bytes again', () => {
    const rewriter = new StreamRewriter('svc', false);
    const first = chunk({ role: 'assistant', content: '' });
    const split = chunk({ content: 'ab' });
    const sent = [first, split.slice(0, 20), split.slice(20), chunk({ content: 'c' }) + chunk({ content: 'd' }), chunk({ content: 'e' }), chunk({ content: 'f' }, { usage: { prompt_tokens: 1, completion_tokens: 5 } })].map((read) =>
      rewriter.push(Buffer.from(read)),
    );
    expect(sent.map((out) => (Buffer.isBuffer(out) ? 'bytes' : out === '' ? 'none' : 'text'))).toEqual(['text', 'none', 'text', 'text', 'bytes', 'text']);
    const list = events(sent.map((out) => out.toString()).join('')) as { model: string; choices: { delta: { content?: string } }[] }[];
    expect(list.map((c) => c.choices[0]!.delta.content).join('')).toBe('abcdef');
    expect(list.every((c) => c.model === 'svc')).toBe(true);
    expect(rewriter.usage).toEqual({ prompt_tokens: 1, completion_tokens: 5 });
    expect(rewriter.producedText().join('')).toBe('abcdef');
  });

  it('byte path: looks at keys only (key names inside content stay text), takes spaced JSON, and leaves several choices to the text path', () => {
    const prefix = '{"id":"up-1","object":"chat.completion.chunk","created":7,"model":"qwen"';
    const reads = [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: '"role": "error" \\"usage\\":null' }),
      `data: ${prefix}, "choices": [{"index": 0, "delta": {"content": "spaced"}, "finish_reason": null}]}\n\n`,
      `data: ${prefix},"choices":[{"index":0,"delta":{"content":"x"}},{"index":1,"delta":{"content":"y"}}]}\n\n`,
      `data: ${prefix},"choices":[{"index":0,"delta":{"content":"z"},"logprobs":{"content":[{"token":"z","logprob":0}]},"finish_reason": "stop"}]}\n\n`,
    ].map((text) => Buffer.from(text));
    const bytes = new StreamRewriter('svc', true);
    const text = new StreamRewriter('svc', true);
    const out = reads.map((read) => bytes.push(read));
    expect(out.map((sent) => Buffer.isBuffer(sent))).toEqual([false, true, true, false, true]);
    expect(out.map((sent) => sent.toString()).join('')).toBe(reads.map((read) => text.pushText(read)).join(''));
    expect(bytes.producedText().join('')).toBe('"role": "error" \\"usage\\":nullspacedxyz');
    expect(bytes.producedText().join('')).toBe(text.producedText().join(''));
    // Content deltas once each, also after the text was parsed for an estimate.
    expect([bytes.finished, bytes.deltas, text.deltas]).toEqual([true, 4, 4]);
  });
});
