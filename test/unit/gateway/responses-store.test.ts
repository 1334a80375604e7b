import { afterEach, describe, expect, it, vi } from 'vitest';
import { ResponseStore } from '../../../server/modules/gateway/responses.store.ts';

const conversation = [
  { role: 'user', content: 'My name is Ann.' },
  { role: 'assistant', content: 'Hello, Ann.' },
];

const record = (conv: typeof conversation | [], items: [string, { role: string; content: string }][] = []) => ({
  conversation: conv,
  items,
  response: JSON.stringify({ id: 'resp_1', object: 'response', output: items.map(([id]) => ({ type: 'message', id })) }),
  input: JSON.stringify([{ type: 'message', id: 'msg_in', role: 'user', content: [{ type: 'input_text', text: 'My name is Ann.' }] }]),
});

afterEach(() => {
  vi.useRealTimers();
});

describe('ResponseStore in memory (single-instance mode)', () => {
  it('keeps a conversation and its items for the payer that made them, for the retention time', async () => {
    vi.useFakeTimers();
    const store = new ResponseStore(null, 60);
    await store.save('payer-a', 'resp_1', record(conversation, [['msg_1', { role: 'assistant', content: 'Hello, Ann.' }]]));
    expect(await store.load('payer-a', 'resp_1', ['msg_1', 'msg_unknown'])).toEqual({
      previous: conversation,
      items: new Map([['msg_1', { role: 'assistant', content: 'Hello, Ann.' }]]),
    });
    // Another payer sees nothing under the same ids.
    expect(await store.load('payer-b', 'resp_1', ['msg_1'])).toEqual({ previous: undefined, items: new Map() });
    // Nothing asked for: null, not "missing".
    expect((await store.load('payer-a', null, [])).previous).toBeNull();
    vi.advanceTimersByTime(61_000);
    expect((await store.load('payer-a', 'resp_1', ['msg_1'])).previous).toBeUndefined();
    expect(await store.response('payer-a', 'resp_1')).toBeNull();
  });

  it('reads back the response and its input items for its payer only; delete forgets all of it, once', async () => {
    const store = new ResponseStore(null, 60);
    const kept = record(conversation, [['msg_1', { role: 'assistant', content: 'Hello, Ann.' }]]);
    await store.save('payer-a', 'resp_1', kept);
    expect(await store.response('payer-a', 'resp_1')).toBe(kept.response);
    expect(await store.inputItems('payer-a', 'resp_1')).toEqual(JSON.parse(kept.input));
    expect(await store.response('payer-b', 'resp_1')).toBeNull();
    expect(await store.delete('payer-b', 'resp_1')).toBe(false);
    expect(await store.delete('payer-a', 'resp_1')).toBe(true);
    expect(await store.response('payer-a', 'resp_1')).toBeNull();
    expect(await store.inputItems('payer-a', 'resp_1')).toBeNull();
    expect(await store.load('payer-a', 'resp_1', ['msg_1'])).toEqual({ previous: undefined, items: new Map() });
    expect(await store.delete('payer-a', 'resp_1')).toBe(false);
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
