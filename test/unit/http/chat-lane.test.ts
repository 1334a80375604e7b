import type { FastifyBaseLogger } from 'fastify';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpReply, HttpRequest } from '../../../server/metering/executor.ts';
import { chatLaneServer } from '../../../server/http/chat-lane.ts';
import { createHttpMetrics } from '../../../server/http/metrics.ts';
import { sleep } from '../../helpers/raw-http.ts';

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
 * request's young objects alive through scavenges: 7.5–8 KB promoted a request instead of ~0.15 KB. So the
 * lane adds no listener next to one Node already keeps on a request or a response.
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

/**
 * The lane on the wire, through raw sockets: what it takes and what it leaves to Fastify (here a stand-in that
 * says it answered), HTTP/1.1 framing both ways, requests and heads split across packets, pipelining,
 * keep-alive, backpressure, errors, and a client that leaves.
 */
describe('the chat lane on the wire', () => {
  const piece = Buffer.alloc(64 * 1024, 'x');
  const streamed = { pieces: 0, maxQueued: 0, closedEarly: 0 };
  const fallback = (req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ by: 'fallback', body: Buffer.concat(parts).toString() })));
  };
  /** What the lane's handler does, by the body's `do`. */
  const handler = async (request: HttpRequest, reply: HttpReply) => {
    const body = request.body as { do: string; pieces?: number };
    const res = reply.raw;
    if (body.do === 'echo') return void reply.type('application/json').send(JSON.stringify({ by: 'lane', body }));
    if (body.do === 'throw') throw new Error('the handler failed');
    reply.head!(200, { 'content-type': 'text/event-stream' });
    if (body.do === 'wait') {
      // A stream whose client may leave: the pipeline hears it by the response's 'close'.
      res.write('data: first\n\n');
      await new Promise<void>((resolve) => {
        res.on('close', () => {
          if (!res.writableFinished) streamed.closedEarly++;
          resolve();
        });
      });
      return;
    }
    if (body.do === 'fail-after-head') {
      res.write('data: first\n\n');
      throw new Error('the upstream broke');
    }
    // `stream`: as the relay writes, waiting on 'drain' whenever a write says the socket is full.
    for (let i = 0; i < body.pieces! && !res.destroyed; i++) {
      streamed.pieces++;
      if (!res.write(piece)) {
        streamed.maxQueued = Math.max(streamed.maxQueued, res.writableLength);
        await new Promise((resolve) => res.once('drain', resolve));
      }
    }
    res.end();
  };
  const server = chatLaneServer(fallback, {
    path: '/v1/chat/completions',
    bodyLimit: 4096,
    cors: null,
    trustedProxies: [],
    log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
    writeLine: null,
    metrics: createHttpMetrics(),
    handler,
  }, { keepAliveTimeout: 300, requestTimeout: 5_000 });
  let port = 0;

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (body: string, headers = '') => `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`;

  /** A raw connection: what it wrote and read, and when the server closed it. */
  async function connection() {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    await once(socket, 'connect');
    let text = '';
    let closed = false;
    socket.on('data', (data: Buffer) => (text += data.toString('latin1')));
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    return {
      socket,
      text: () => text,
      closed: () => closed,
      /** Writes `parts`, each in its own packet. */
      async send(...parts: string[]) {
        for (const part of parts) {
          socket.write(part);
          await sleep(15);
        }
      },
      /** The bodies of the first `count` replies, once they are in (content-length or chunked). */
      async replies(count: number): Promise<{ head: string; body: string }[]> {
        await expect.poll(() => parseReplies(text).length, { timeout: 5000 }).toBeGreaterThanOrEqual(count);
        return parseReplies(text).slice(0, count);
      },
    };
  }

  it('takes a request split across packets: inside the request line, inside a header, and the body in two', async () => {
    const c = await connection();
    const wire = post('{"do":"echo","n":1}');
    const at = wire.indexOf('\r\n\r\n') + 4;
    await c.send(wire.slice(0, 7), wire.slice(7, 40), wire.slice(40, at + 5), wire.slice(at + 5));
    const [reply] = await c.replies(1);
    expect(reply!.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(reply!.body)).toEqual({ by: 'lane', body: { do: 'echo', n: 1 } });
    c.socket.destroy();
  });

  it('answers pipelined requests in order, each by its own handler: the lane, Fastify for a chunked body, the lane', async () => {
    const c = await connection();
    const chunkedBody = '{"do":"echo","n":2}';
    const chunked = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${chunkedBody.length.toString(16)}\r\n${chunkedBody}\r\n0\r\n\r\n`;
    await c.send(post('{"do":"echo","n":1}') + chunked + post('{"do":"echo","n":3}'));
    const replies = await c.replies(3);
    expect(replies.map((reply) => JSON.parse(reply.body) as { by: string })).toEqual([
      { by: 'lane', body: { do: 'echo', n: 1 } },
      { by: 'fallback', body: chunkedBody },
      { by: 'lane', body: { do: 'echo', n: 3 } },
    ]);
    c.socket.destroy();
  });

  it('leaves to Fastify a query string, another content type, and a body over the limit', async () => {
    const c = await connection();
    const big = JSON.stringify({ do: 'echo', pad: 'x'.repeat(5000) });
    await c.send(
      post('{"do":"echo"}').replace('/v1/chat/completions', '/v1/chat/completions?x=1') + post('{"do":"echo"}').replace('application/json', 'text/plain') + post(big),
    );
    const replies = await c.replies(3);
    expect(replies.map((reply) => (JSON.parse(reply.body) as { by: string }).by)).toEqual(['fallback', 'fallback', 'fallback']);
    c.socket.destroy();
  });

  it('frames a whole reply by content-length and a stream as chunked, ended by its last chunk', async () => {
    const c = await connection();
    await c.send(post('{"do":"echo"}') + post('{"do":"stream","pieces":2}'));
    const [whole, stream] = await c.replies(2);
    expect(whole!.head).toMatch(/\r\ncontent-length: \d+$/im);
    expect(whole!.head).not.toMatch(/transfer-encoding/i);
    expect(stream!.head).toMatch(/\r\ntransfer-encoding: chunked$/im);
    expect(stream!.body).toHaveLength(2 * piece.length);
    expect(c.text().endsWith('0\r\n\r\n')).toBe(true);
    c.socket.destroy();
  });

  it('keeps a connection alive between requests, and closes it once idle for the keep-alive time', async () => {
    const c = await connection();
    await c.send(post('{"do":"echo"}'));
    await c.replies(1);
    await sleep(100);
    await c.send(post('{"do":"echo"}'));
    expect(await c.replies(2)).toHaveLength(2);
    expect(c.closed()).toBe(false);
    await expect.poll(() => c.closed(), { timeout: 3000 }).toBe(true);
  });

  it('a client that stops reading holds the stream back: what waits in memory stays bounded, and all arrives once it reads', async () => {
    streamed.pieces = 0;
    streamed.maxQueued = 0;
    const total = 512; // 32 MiB
    const c = await connection();
    c.socket.pause();
    await c.send(post(`{"do":"stream","pieces":${total}}`));
    await sleep(500);
    // Socket buffers' worth got out; the handler waits on 'drain' instead of queueing the rest.
    expect(streamed.pieces).toBeLessThan(total / 2);
    expect(streamed.maxQueued).toBeLessThanOrEqual(4 * piece.length);
    c.socket.resume();
    const [reply] = await c.replies(1);
    expect(reply!.body).toHaveLength(total * piece.length);
    c.socket.destroy();
  });

  it('a client that leaves mid-stream is heard at once: the response closes before it finished', async () => {
    streamed.closedEarly = 0;
    const c = await connection();
    await c.send(post('{"do":"wait"}'));
    await expect.poll(() => c.text().includes('data: first')).toBe(true);
    c.socket.destroy();
    await expect.poll(() => streamed.closedEarly).toBe(1);
  });

  it('errors: bad JSON and a failed handler get the envelope; a failure after the head cuts the connection', async () => {
    const c = await connection();
    await c.send(post('{"do":') + post('{"do":"throw"}'));
    const [bad, failed] = await c.replies(2);
    expect(bad!.head).toMatch(/^HTTP\/1\.1 400 /);
    expect(bad!.head).toMatch(/\r\nx-svc-request-id: mbr_/i);
    expect(JSON.parse(bad!.body)).toMatchObject({ ok: false, code: 'invalid_json' });
    expect(failed!.head).toMatch(/^HTTP\/1\.1 500 /);
    expect(JSON.parse(failed!.body)).toMatchObject({ ok: false, code: 'internal_error' });
    const cut = await connection();
    await cut.send(post('{"do":"fail-after-head"}'));
    await expect.poll(() => cut.closed()).toBe(true);
    expect(cut.text()).toContain('data: first');
    expect(cut.text().endsWith('0\r\n\r\n')).toBe(false);
  });

  it('a malformed request reaches neither handler and is refused with 400', async () => {
    const c = await connection();
    await c.send('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: nope\r\n\r\n');
    await expect.poll(() => c.closed()).toBe(true);
    expect(c.text()).toMatch(/^HTTP\/1\.1 400 /);
  });
});

/** Complete replies in `text`, framed by content-length or chunked encoding (bodies decoded). */
function parseReplies(text: string): { head: string; body: string }[] {
  const replies: { head: string; body: string }[] = [];
  let at = 0;
  for (;;) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) return replies;
    const head = text.slice(at, end);
    let next = end + 4;
    const length = /\r\ncontent-length: (\d+)/i.exec(head);
    let body = '';
    if (length) {
      if (text.length < next + Number(length[1])) return replies;
      body = text.slice(next, next + Number(length[1]));
      next += Number(length[1]);
    } else if (/\r\ntransfer-encoding: chunked/i.test(head)) {
      for (;;) {
        const line = text.indexOf('\r\n', next);
        if (line < 0) return replies;
        const size = parseInt(text.slice(next, line), 16);
        if (text.length < line + 2 + size + 2) return replies;
        body += text.slice(line + 2, line + 2 + size);
        next = line + 2 + size + 2;
        if (size === 0) break;
      }
    }
    replies.push({ head, body });
    at = next;
  }
}
