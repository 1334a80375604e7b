/**
 * The Responses store on a real Redis, through svc's own client (`openRedis`: key prefix, auto-pipelining):
 * a response is one key, written with one plain SET with the retention TTL, under the configured prefix, and
 * its message items are read from it (their ids are made from the response's); a read issued right after `save` (not awaited, as the framing does) finds the response,
 * and the writes are on the socket once the caller flushes them, before it answers, so a read through another instance finds it
 * too. Responses an older svc kept (a key for each part, a key per message item) are still read and deleted.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { openRedis, type RedisLayer } from '../../../server/infra/redis.ts';
import { ResponseStore } from '../../../server/modules/gateway/responses.store.ts';
import { testRedisUrl } from '../../helpers/env.ts';

const keyPrefix = `svc-test:${randomBytes(4).toString('hex')}:`;
let layer: RedisLayer;
let inspect: Redis;

beforeAll(async () => {
  layer = await openRedis(parseConfig({ redis: { url: testRedisUrl, keyPrefix } }), pino({ level: 'silent' }));
  inspect = new Redis(testRedisUrl);
});

afterAll(async () => {
  const keys = await inspect.keys(`${keyPrefix}*`);
  if (keys.length > 0) await inspect.del(...keys);
  inspect.disconnect();
  await layer?.close();
});

const conversation = [
  { role: 'user', content: 'My name is "Ann".\n' },
  { role: 'assistant', content: 'Hello, Ann — 你好.' },
];
const item = { role: 'assistant', content: 'Hello, Ann — 你好.' };
const hex = (n: number) => n.toString(16).padStart(48, 'c');
/** A response object whose output is one message item, its id made from the response's (as the framing makes it). */
const responseOf = (n: number) =>
  JSON.stringify({ id: `resp_${hex(n)}`, object: 'response', output: [{ type: 'message', id: `msg_${hex(n)}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: item.content, annotations: [], logprobs: [] }] }] });

describe('ResponseStore on Redis', () => {
  it('writes a response as one SET with the TTL, readable at once, its message item through it', async () => {
    const store = new ResponseStore(layer.redis, 600);
    const redis = layer.redis!;
    const sent = vi.spyOn(redis, 'sendCommand');
    const response = responseOf(1);
    const input = JSON.stringify([{ type: 'message', role: 'user', content: 'x' }]);
    await store.save('payer-r', `resp_${hex(0)}`, { conversation: JSON.stringify(conversation), response: responseOf(0), input });
    // Auto-pipelining hands the commands to the client after this turn: counted once the write is done.
    expect(sent.mock.calls.map(([command]) => command.name)).toEqual(['set']);
    sent.mockRestore();
    // Read without waiting for the write (as the framing does): the one connection keeps the order.
    const saved = store.save('payer-r', `resp_${hex(1)}`, { conversation: JSON.stringify(conversation), response, input });
    // Not flushed: it goes out at the end of this tick anyway.
    const [object, loaded, referenced] = await Promise.all([
      store.response('payer-r', `resp_${hex(1)}`),
      store.load('payer-r', `resp_${hex(1)}`, [`msg_${hex(1)}`]),
      store.load('payer-r', null, [`msg_${hex(0)}`, `msg_${hex(1)}`, `msg_${hex(2)}`]),
    ]);
    await saved;
    expect(object).toBe(response);
    expect(loaded).toEqual({ previous: conversation, items: new Map([[`msg_${hex(1)}`, item]]) });
    expect(referenced).toEqual({ previous: null, items: new Map([[`msg_${hex(0)}`, item], [`msg_${hex(1)}`, item]]) });
    expect(await store.load('payer-x', null, [`msg_${hex(1)}`])).toEqual({ previous: null, items: new Map() });
    expect(await store.inputItems('payer-r', `resp_${hex(1)}`)).toEqual(JSON.parse(input));
    expect(await store.delete('payer-r', `resp_${hex(0)}`)).toBe(true);
    expect(await store.load('payer-r', null, [`msg_${hex(0)}`])).toEqual({ previous: null, items: new Map() });
    const keys = await inspect.keys(`${keyPrefix}responses:payer-r:*`);
    expect(keys).toEqual([`${keyPrefix}responses:payer-r:resp_${hex(1)}:kept`]);
    expect(await inspect.ttl(keys[0]!)).toBeGreaterThan(590);
    expect(await store.delete('payer-r', `resp_${hex(1)}`)).toBe(true);
    expect(await inspect.keys(`${keyPrefix}responses:payer-r:*`)).toEqual([]);
  });

  it("is in the Redis socket's kernel buffer once flushed, before the caller's reply, though an auto-pipeline waits", async () => {
    const store = new ResponseStore(layer.redis, 60);
    const redis = layer.redis as Redis;
    // Under load: an auto-pipeline of other commands waits for its answer; the save once waited behind it.
    const busy = Promise.all(Array.from({ length: 50 }, () => redis.ping()));
    const before = redis.stream.bytesWritten;
    const response = JSON.stringify({ id: 'resp_r3', object: 'response', output: [] });
    const saved = store.save('payer-r', 'resp_r3', { conversation: JSON.stringify(conversation), response, input: '[]' });
    // Held for the turn's final checkpoint to join it in one write, until the caller flushes.
    expect(redis.stream.writableLength).toBeGreaterThan(response.length);
    store.flush();
    // `bytesWritten` counts what is buffered too: none is, so it was all handed to the kernel.
    expect(redis.stream.writableLength).toBe(0);
    expect(redis.stream.bytesWritten - before).toBeGreaterThan(response.length);
    // Read through another connection (as another instance would) without waiting for the save.
    expect((await inspect.get(`${keyPrefix}responses:payer-r:resp_r3:kept`))?.split('\n')[0]).toBe(response);
    await Promise.all([busy, saved]);
  });

  it('writes a response without message items (only tool calls) the same way', async () => {
    const store = new ResponseStore(layer.redis, 60);
    await store.save('payer-r', 'resp_r2', { conversation: '[]', response: '{"id":"resp_r2","output":[]}', input: '[]' });
    expect(await store.response('payer-r', 'resp_r2')).toBe('{"id":"resp_r2","output":[]}');
    expect((await store.load('payer-r', 'resp_r2', [])).previous).toEqual([]);
  });

  it('reads, chains from and deletes a response an older svc kept as a key for each part', async () => {
    const store = new ResponseStore(layer.redis, 60);
    const response = JSON.stringify({ id: 'resp_old', object: 'response', output: [{ type: 'message', id: 'msg_old' }] });
    const input = JSON.stringify([{ type: 'message', role: 'user', content: 'x' }]);
    const old = `${keyPrefix}responses:payer-r:resp_old`;
    await inspect.set(old, JSON.stringify(conversation), 'EX', 60);
    await inspect.set(`${old}:object`, response, 'EX', 60);
    await inspect.set(`${old}:input`, input, 'EX', 60);
    await inspect.set(`${keyPrefix}responses:payer-r:item:msg_old`, JSON.stringify(item), 'EX', 60);
    expect(await store.response('payer-r', 'resp_old')).toBe(response);
    expect(await store.inputItems('payer-r', 'resp_old')).toEqual(JSON.parse(input));
    expect(await store.load('payer-r', 'resp_old', ['msg_old'])).toEqual({ previous: conversation, items: new Map([['msg_old', item]]) });
    expect(await store.response('payer-x', 'resp_old')).toBeNull();
    expect(await store.delete('payer-r', 'resp_old')).toBe(true);
    expect(await inspect.keys(`${keyPrefix}responses:payer-r:*old*`)).toEqual([]);
    expect(await store.delete('payer-r', 'resp_old')).toBe(false);
  });
});
