import { afterEach, describe, expect, it, vi } from 'vitest';
import { ResponseStore } from '../../../server/modules/gateway/responses.store.ts';

const conversation = [
  { role: 'user', content: 'My name is Ann.' },
  { role: 'assistant', content: 'Hello, Ann.' },
];

const HEX = 'a1'.repeat(24);
const RESP = `resp_${HEX}`;
const MSG = `msg_${HEX}`;

/** A kept response whose output is a message item for each text (ids made from the response's, as the framing makes them). */
const record = (conv: typeof conversation | [], texts: string[] = []) => ({
  conversation: JSON.stringify(conv),
  response: JSON.stringify({
    id: RESP,
    object: 'response',
    output: texts.map((text, n) => ({ type: 'message', id: n === 0 ? MSG : `${MSG}_${n}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [], logprobs: [] }] })),
  }),
  input: JSON.stringify([{ type: 'message', id: 'msg_in', role: 'user', content: [{ type: 'input_text', text: 'My name is Ann.' }] }]),
});

afterEach(() => {
  vi.useRealTimers();
});

describe('ResponseStore in memory (single-instance mode)', () => {
  it('keeps a conversation and its items for the payer that made them, for the retention time', async () => {
    vi.useFakeTimers();
    const store = new ResponseStore(null, 60);
    await store.save('payer-a', RESP, record(conversation, ['Hello, Ann.', 'And "more".']));
    expect(await store.load('payer-a', RESP, [MSG, `${MSG}_1`, 'msg_unknown', `msg_${'b2'.repeat(24)}`])).toEqual({
      previous: conversation,
      items: new Map([
        [MSG, { role: 'assistant', content: 'Hello, Ann.' }],
        [`${MSG}_1`, { role: 'assistant', content: 'And "more".' }],
      ]),
    });
    // A message item is found through its response: without previous_response_id too.
    expect(await store.load('payer-a', null, [MSG])).toEqual({ previous: null, items: new Map([[MSG, { role: 'assistant', content: 'Hello, Ann.' }]]) });
    // Another payer sees nothing under the same ids.
    expect(await store.load('payer-b', RESP, [MSG])).toEqual({ previous: undefined, items: new Map() });
    // Nothing asked for: null, not "missing".
    expect((await store.load('payer-a', null, [])).previous).toBeNull();
    vi.advanceTimersByTime(61_000);
    expect(await store.load('payer-a', RESP, [MSG])).toEqual({ previous: undefined, items: new Map() });
    expect(await store.response('payer-a', RESP)).toBeNull();
  });

  it('reads back the response and its input items for its payer only; delete forgets all of it, once', async () => {
    const store = new ResponseStore(null, 60);
    const kept = record(conversation, ['Hello, Ann.']);
    await store.save('payer-a', RESP, kept);
    expect(await store.response('payer-a', RESP)).toBe(kept.response);
    expect(await store.inputItems('payer-a', RESP)).toEqual(JSON.parse(kept.input));
    expect(await store.response('payer-b', RESP)).toBeNull();
    expect(await store.delete('payer-b', RESP)).toBe(false);
    expect(await store.delete('payer-a', RESP)).toBe(true);
    expect(await store.response('payer-a', RESP)).toBeNull();
    expect(await store.inputItems('payer-a', RESP)).toBeNull();
    expect(await store.load('payer-a', RESP, [MSG])).toEqual({ previous: undefined, items: new Map() });
    expect(await store.delete('payer-a', RESP)).toBe(false);
  });

  it('keeps nothing when retention is 0, and stays bounded', async () => {
    const off = new ResponseStore(null, 0);
    expect(off.enabled).toBe(false);
    await off.save('p', 'resp_1', record(conversation));
    expect((await off.load('p', 'resp_1', [])).previous).toBeUndefined();
    const store = new ResponseStore(null, 60);
    for (let i = 0; i < 10_050; i++) await store.save('p', `resp_${i}`, record([]));
    expect((await store.load('p', 'resp_0', [])).previous).toBeUndefined();
    expect((await store.load('p', 'resp_10049', [])).previous).toEqual([]);
  });
});
