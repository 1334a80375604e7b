import { describe, expect, it } from 'vitest';
import type { ChatCompletion } from '../../../server/modules/gateway/framing.ts';
import type { SearchRound } from '../../../server/modules/gateway/hosted-search.ts';
import { saneUsage } from '../../../server/modules/gateway/json-reply.ts';
import { ResponsesFraming, type ResponseEcho } from '../../../server/modules/gateway/responses.framing.ts';
import { ResponseStore } from '../../../server/modules/gateway/responses.store.ts';
import type { StreamError } from '../../../server/modules/gateway/stream-rewriter.ts';

const head = { id: 'up-1', object: 'chat.completion.chunk', created: 7, model: 'qwen', system_fingerprint: null };
const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null })}\n\n`;

const echo: ResponseEcho = {
  instructions: null,
  max_output_tokens: 64,
  metadata: {},
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: false,
  temperature: 1,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  truncation: 'disabled',
  user: null,
};

function stream() {
  return new ResponsesFraming({ id: 'resp_test', createdAt: 1, echo, store: null, payerId: 'payer', conversation: [], input: [], names: new Map() }).stream('svc-2.1');
}

/** The same events with the message item's random id made fixed. */
const fixedIds = (text: string) => text.replace(/msg_[0-9a-f]{48}/g, 'msg_X');

describe('the Responses stream', () => {
  it('events read one at a time (as model servers send them) go the byte path, and come out as the text path frames them', () => {
    const texts = ['plain ', 'quote " and \\ backslash ', 'tab\t new\nline ', 'ünïcödé 漢字 😀 ', '', '\u0001 end'];
    const events = [chunk({ role: 'assistant', content: '' }), ...texts.map((text) => chunk({ content: text })), chunk({ content: 'last' }, 'stop'), 'data: [DONE]\n\n'];
    const usage = { prompt_tokens: 5, completion_tokens: 6 };
    const whole = stream();
    const expected = fixedIds(`${whole.push(Buffer.from(events.join('')))}${whole.end(usage) as string}`);
    const byEvent = stream();
    let out = '';
    let buffers = 0;
    for (const event of events) {
      const sent = byEvent.push(Buffer.from(event), false);
      if (Buffer.isBuffer(sent)) buffers++;
      out += sent.toString();
    }
    out += byEvent.end(usage) as string;
    expect(fixedIds(out)).toBe(expected);
    // Every text after the one that opens the message, but the empty one.
    expect(buffers).toBe(texts.length - 2);
    expect(byEvent.deltas).toBe(whole.deltas);
    const done = out.split('\n\n').find((block) => block.startsWith('event: response.output_text.done'))!;
    expect(JSON.parse(done.split('\n')[1]!.slice(6))).toMatchObject({ text: texts.join('') + 'last' });
    // Sequence numbers count every event, the byte path's too.
    const sequences = out
      .trim()
      .split('\n\n')
      .map((block) => (JSON.parse(block.split('\n')[1]!.slice(6)) as { sequence_number: number }).sequence_number);
    expect(sequences).toEqual(sequences.map((_, i) => i));
  });

  it('a read of several events (coalesced writes) goes the byte path event by event, and comes out as the text path frames it', () => {
    const texts = ['one ', 'quote " two ', 'ünï 😀 ', '', 'five'];
    const opening = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'open ' })];
    const rest = [...texts.map((text) => chunk({ content: text })), chunk({}, 'stop'), `data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 } })}\n\n`, 'data: [DONE]\n\n'];
    const usage = { prompt_tokens: 5, completion_tokens: 6 };
    const whole = stream();
    const expected = fixedIds(`${whole.push(Buffer.from([...opening, ...rest].join('')))}${whole.end(usage) as string}`);
    // The reads: whole events, then one split inside an event (its end comes with the next read).
    const all = Buffer.from(rest.join(''));
    const cut = all.indexOf('five');
    for (const chunked of [false, true]) {
      const framer = stream();
      let out = opening.map((event) => framer.push(Buffer.from(event)).toString()).join('');
      const deltasBefore = framer.deltas;
      for (const read of [all.subarray(0, cut), all.subarray(cut)]) {
        const sent = framer.push(read, chunked);
        expect(Buffer.isBuffer(sent)).toBe(true);
        if (!chunked) {
          out += sent.toString();
          continue;
        }
        const text = sent.toString();
        const size = text.slice(0, text.indexOf('\r\n'));
        const body = text.slice(size.length + 2, -2);
        expect(Number.parseInt(size, 16)).toBe(Buffer.byteLength(body));
        out += body;
      }
      out += framer.end(usage) as string;
      expect(fixedIds(out)).toBe(expected);
      expect(framer.deltas - deltasBefore).toBe(texts.filter(Boolean).length);
      expect(framer.deltas).toBe(whole.deltas);
    }
  });

  it('as an HTTP chunk when asked: the event between its size line and CRLF', () => {
    const framer = stream();
    framer.push(Buffer.from(chunk({ role: 'assistant', content: 'a' })));
    const frame = framer.push(Buffer.from(chunk({ content: 'b' })), true) as Buffer;
    const text = frame.toString();
    const size = text.slice(0, text.indexOf('\r\n'));
    const body = text.slice(size.length + 2, -2);
    expect(Number.parseInt(size, 16)).toBe(Buffer.byteLength(body));
    expect(text.endsWith('\r\n')).toBe(true);
    expect(JSON.parse(body.split('\n')[1]!.slice(6))).toMatchObject({ type: 'response.output_text.delta', delta: 'b', content_index: 0, output_index: 0, logprobs: [] });
  });
});

describe('the response object as JSON (the template)', () => {
  const framingWith = (over: Partial<ResponseEcho>) =>
    new ResponsesFraming({ id: 'resp_tmpl', createdAt: 1_765_000_000, echo: { ...echo, ...over }, store: null, payerId: 'payer', conversation: [], input: [], names: new Map() });
  const output = [
    { type: 'message' as const, id: 'msg_1', status: 'completed' as const, role: 'assistant' as const, content: [{ type: 'output_text' as const, text: 'quote " \\ \n 漢字 😀 \u2028', annotations: [], logprobs: [] }] },
    { type: 'function_call' as const, id: 'fc_1', call_id: 'call_1', name: 'get', arguments: '{"a":1}', status: 'completed' as const },
  ];
  const usage = { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 };

  it('is, byte for byte, the response object serialised, in every state and echo', () => {
    const echoes: Partial<ResponseEcho>[] = [
      {},
      { instructions: 'Be "brief".', metadata: { run: '7', nested: { a: [1, null] } }, tools: [{ type: 'function', name: 'get', parameters: {} }], tool_choice: { type: 'function', name: 'get' } },
      { temperature: undefined as unknown as number, top_p: undefined as unknown as number, store: true, user: 'ann', previous_response_id: 'resp_prev', reasoning: { effort: 'low', summary: null } },
    ];
    const states: [string | null, typeof output | [], typeof usage | null, StreamError | null][] = [
      [null, [], null, null],
      ['stop', output, usage, null],
      ['length', output, usage, null],
      ['content_filter', [], { ...usage, cost: '0.0012' } as typeof usage, null],
      ['tool_calls', output, null, null],
      [null, output, null, { type: 'server_error', code: 'upstream_error', message: 'The model server failed "mid-stream".', param: null }],
    ];
    for (const over of echoes) {
      const framing = framingWith(over);
      for (const model of ['svc-2.1', 'naïve/"model"']) {
        for (const [finish, out, use, failed] of states) {
          expect(framing.responseJson(model, finish, out, use, failed)).toBe(JSON.stringify(framing.response(model, finish, out, use, failed)));
        }
      }
    }
  });

  it('carries the response in the stream events as the event serialiser would', () => {
    const framer = framingWith({ metadata: { run: '7' } }).stream('svc-2.1');
    const events = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hi "there"' }), chunk({ content: '.' }, 'length'), 'data: [DONE]\n\n'];
    const out = `${framer.push(Buffer.from(events.join('')))}${framer.end({ prompt_tokens: 2, completion_tokens: 3 }) as string}${framer.fail({ type: 'server_error', code: 'upstream_error', message: 'gone', param: null })}`;
    const withResponse = out
      .trim()
      .split('\n\n')
      .map((block) => block.split('\n'))
      .filter(([, data]) => data!.includes('"response":{'));
    expect(withResponse.map(([event]) => event)).toEqual(['event: response.created', 'event: response.in_progress', 'event: response.incomplete', 'event: response.failed']);
    for (const [event, data] of withResponse) {
      const payload = JSON.parse(data!.slice('data: '.length)) as { type: string; sequence_number: number; response: Record<string, unknown> };
      expect(payload.type).toBe(event!.slice('event: '.length));
      // What `JSON.stringify({ type, sequence_number, response })` would have written.
      expect(data).toBe(`data: ${JSON.stringify({ type: payload.type, sequence_number: payload.sequence_number, response: payload.response })}`);
    }
  });
});

describe('a non-streaming reply made from the upstream text (fastJson)', () => {
  const bounds = { promptBound: 1000, outputBound: 100 };
  const id = `resp_${'5e'.repeat(24)}`;
  const framing = (store: ResponseStore) =>
    new ResponsesFraming({ id, createdAt: 1_765_000_000, echo: { ...echo, store: true }, store, payerId: 'payer', conversation: [{ role: 'user', content: 'Hi "you".' }], input: [], names: new Map() });
  /** What the parsed path frames (`ChatExecutor`'s `#complete`, then `json`). */
  const parsed = (text: string, frame: ResponsesFraming) => {
    const completion = JSON.parse(text) as ChatCompletion;
    completion.model = 'svc-2.1';
    completion.usage = saneUsage(completion.usage, bounds)!;
    return frame.json(completion);
  };
  const reply = (message: string, tail = ',"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}', choice = '"logprobs":null,"finish_reason":"stop"') =>
    `{"id":"chatcmpl-1","object":"chat.completion","created":7,"model":"qwen","choices":[{"index":0,"message":${message},${choice}}]${tail}`;

  it('is the response the parsed path frames, and keeps the same conversation, for the shapes model servers send', async () => {
    const texts = [
      reply('{"role":"assistant","content":"Hi \\"there\\"\\n\\u00e9 ünï 漢字 😀 \\\\ \\/ \\u2028","refusal":null}'),
      // OpenAI: annotations, details in usage, members after it.
      reply(
        '{"role":"assistant","content":"Cut","refusal":null,"annotations":[]}',
        ',"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},"service_tier":"default","system_fingerprint":"fp_1"}',
        '"logprobs":null,"finish_reason":"length"',
      ),
      // vLLM: reasoning, an empty tool_calls, stop_reason; usage counts in another order.
      reply(
        '{"role":"assistant","reasoning_content":"think \\"hard\\"","content":"Done.","tool_calls":[]}',
        ',"usage":{"prompt_tokens":5,"total_tokens":11,"completion_tokens":6,"prompt_tokens_details":null},"prompt_logprobs":null,"kv_transfer_params":null}',
        '"logprobs":null,"finish_reason":"stop","stop_reason":null',
      ),
      reply('{"role":"assistant","content":null}', undefined, '"finish_reason":"content_filter"'),
      reply('{"role":"assistant","content":""}', undefined, '"finish_reason":null'),
    ];
    for (const text of texts) {
      const [fastStore, slowStore] = [new ResponseStore(null, 60), new ResponseStore(null, 60)];
      const fast = framing(fastStore).fastJson(text, 'svc-2.1', bounds);
      expect(fast).not.toBeNull();
      const slow = parsed(text, framing(slowStore));
      expect(JSON.parse(fast!.body)).toEqual(JSON.parse(slow));
      expect(fast!.usage).toEqual({ prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 });
      expect(await fastStore.response('payer', id)).toBe(fast!.body);
      const [fastLoaded, slowLoaded] = await Promise.all([fastStore.load('payer', id, [`msg_${'5e'.repeat(24)}`]), slowStore.load('payer', id, [`msg_${'5e'.repeat(24)}`])]);
      expect(fastLoaded).toEqual(slowLoaded);
      expect(fastLoaded.previous).toHaveLength(2);
    }
  });

  it('leaves to the parsed path what it does not read', () => {
    const texts = [
      reply('{"role":"assistant","content":null,"refusal":"No."}'),
      reply('{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}'),
      reply('{"role":"assistant","content":"a"}', undefined, '"logprobs":{"content":[]},"finish_reason":"stop"'),
      reply('{"role":"assistant","content":"a"}', undefined, '"finish_reason":"stop"},{"index":1,"message":{"role":"assistant","content":"b"},"finish_reason":"stop"'),
      reply('{"role":"assistant","content":"bad \\x escape"}'),
      reply('{"role":"assistant","content":"raw\ttab"}'),
      reply('{"role":"assistant","content":"a"}', '}'),
      reply('{"role":"assistant","content":"a"}', ',"usage":{"prompt_tokens":5000,"completion_tokens":6,"total_tokens":5006}}'),
      reply('{"role":"assistant","content":"a"}', undefined, '"finish_reason":"Stop!"'),
      reply('{"role":"user","content":"a"}'),
      `${reply('{"role":"assistant","content":"a"}').slice(0, -1)}`,
    ];
    for (const text of texts) expect(framing(new ResponseStore(null, 60)).fastJson(text, 'svc-2.1', bounds)).toBeNull();
    const searching = framing(new ResponseStore(null, 60));
    searching.searches = [{ query: 'q', result: null } as unknown as SearchRound];
    expect(searching.fastJson(reply('{"role":"assistant","content":"a"}'), 'svc-2.1', bounds)).toBeNull();
  });
});
