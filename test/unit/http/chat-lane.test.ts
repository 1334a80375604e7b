import type { FastifyBaseLogger } from 'fastify';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpReply, HttpRequest } from '../../../server/metering/executor.ts';
import { chatLaneServer } from '../../../server/http/chat-lane.ts';
import { createHttpMetrics } from '../../../server/http/metrics.ts';

/** Events that have more than one listener on `emitter`, with how many. */
function shared(emitter: NodeJS.EventEmitter): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of emitter.eventNames()) {
    const count = emitter.listenerCount(name);
    if (count > 1) counts[String(name)] = count;
  }
  return counts;
}

/**
 * A second listener for one event turns the emitter's entry into a two-element array made at one site in
 * Node's `events.js`. V8 pretenured that site in some svc processes started cold under load (2 of 10 to 9
 * of 12, as the hour decided). Then every request's array is born in the old generation and keeps the
 * request's young objects alive through scavenges: 7.5–8 KB promoted a request instead of ~0.15 KB
 * (test/bench/RESULTS.md, twenty-third pass). So the lane adds no listener next to one Node already keeps
 * on a request or a response.
 */
describe('the chat lane and per-request listeners', () => {
  const lines: string[] = [];
  const seen: { request: Record<string, number>; response: Record<string, number> }[] = [];
  const server = chatLaneServer(() => {
    throw new Error('not the lane');
  }, {
    path: '/v1/chat/completions',
    bodyLimit: 1 << 20,
    cors: null,
    trustedProxies: [],
    log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
    writeLine: (line) => lines.push(line),
    metrics: createHttpMetrics(),
    handler: async (_request: HttpRequest, reply: HttpReply) => {
      const res = reply.raw;
      // What the pipeline adds while a turn runs.
      const onClose = () => undefined;
      res.on('close', onClose);
      seen.push({ request: shared(res.req), response: shared(res) });
      reply.send('{"ok":true}');
      res.off('close', onClose);
    },
  }, { keepAliveTimeout: 5_000, requestTimeout: 5_000 });
  let origin = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('serves a request with one listener at most per event, and still logs it', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m"}' });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true });
    }
    expect(seen).toEqual(Array.from({ length: 3 }, () => ({ request: {}, response: {} })));
    await expect.poll(() => lines.length).toBe(3);
    expect(lines[0]).toContain('"statusCode":200');
  });
});
