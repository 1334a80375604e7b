import { afterEach, describe, expect, it, vi } from 'vitest';
import { ResponseStore } from '../../../server/modules/gateway/responses.store.ts';

const conversation = [
  { role: 'user', content: 'My name is Ann.' },
  { role: 'assistant', content: 'Hello, Ann.' },
];

afterEach(() => {
  vi.useRealTimers();
});

describe('ResponseStore in memory (single-instance mode)', () => {
  it('keeps a conversation and its items for the payer that made them, for the retention time', async () => {
    vi.useFakeTimers();
    const store = new ResponseStore(null, 60);
    await store.save('payer-a', 'resp_1', conversation, [['msg_1', { role: 'assistant', content: 'Hello, Ann.' }]]);
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
  });

  it('keeps nothing when retention is 0, and stays bounded', async () => {
    const off = new ResponseStore(null, 0);
    expect(off.enabled).toBe(false);
    await off.save('p', 'resp_1', conversation, []);
    expect((await off.load('p', 'resp_1', [])).previous).toBeUndefined();
    const store = new ResponseStore(null, 60);
    for (let i = 0; i < 10_050; i++) await store.save('p', `resp_${i}`, [], []);
    expect((await store.load('p', 'resp_0', [])).previous).toBeUndefined();
    expect((await store.load('p', 'resp_10049', [])).previous).toEqual([]);
  });
});
