/**
 * The gateway's HTTP on the wire, end to end, in both of its HTTP stacks: svc's own (the chat lane ahead of
 * Fastify, chat calls through `Http1Pool`) and the libraries' (Fastify's route, undici's Pool), which
 * `gateway.httpLayer` and `gateway.upstreamClient` choose between. Clients that pipeline, split their
 * requests across packets or send chunked bodies; keep-alive; a client that leaves mid-stream, which must
 * reach the upstream; and an upstream that answers malformed, resets, or never answers.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Http1Pool } from '../../../server/modules/model/http1-pool.ts';
import { UndiciChatClient } from '../../../server/modules/model/undici-client.ts';
import { rawServer, sleep, type RawServer } from '../../helpers/raw-http.ts';
import { startHarness, type Harness, type Member } from './harness.ts';

const stacks = [
  ["svc's own: the chat lane and Http1Pool", { httpLayer: 'lane', upstreamClient: 'pool' }],
  ["the libraries': Fastify's route and undici's Pool", { httpLayer: 'fastify', upstreamClient: 'undici' }],
] as const;

const completion = JSON.stringify({
  id: 'chatcmpl-raw',
  object: 'chat.completion',
  created: 1,
  model: 'raw',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
});

describe.each(stacks)('HTTP conformance, %s', (_name, gateway) => {
  let h: Harness;
  let m: Member;
  /** An upstream whose answers are raw bytes, chosen by a tag in the request. */
  let raw: RawServer;
  let rawHarness: Harness;
  let rawMember: Member;
  let fastifySaw = 0;

  beforeAll(async () => {
    // Fastify's hooks see a chat request only when Fastify serves it, not when the lane does.
    h = await startHarness({ config: { gateway }, beforeListen: (app) => void app.addHook('onRequest', async (request) => void (request.url === '/v1/chat/completions' && fastifySaw++)) });
    m = await h.member();
    raw = await rawServer((socket, request) => {
      if (request.includes('#malformed')) socket.write('HTTP/1.1 abc\r\n\r\n');
      else if (request.includes('#reset')) socket.resetAndDestroy();
      else if (request.includes('#silent')) return;
      else socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${completion.length}\r\n\r\n${completion}`);
    });
    rawHarness = await startHarness({ config: { gateway: { ...gateway, upstreamTimeoutMs: 600 } }, env: { SVC_UPSTREAM_URL: `${raw.origin}/v1` } });
    rawMember = await rawHarness.member();
  });
  afterAll(async () => {
    await h?.close();
    await rawHarness?.close();
    await raw?.close();
  });

  const chatBody = (content: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'svc-2.1-fast', messages: [{ role: 'user', content }], ...extra });
  const post = (key: string, body: string) => `POST /v1/chat/completions HTTP/1.1\r\nhost: svc\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  /** A raw connection to svc, collecting what it answers. */
  async function open(url: string) {
    const socket: Socket = connect(Number(new URL(url).port), '127.0.0.1');
    socket.setNoDelay(true);
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (data: Buffer) => (text += data.toString('utf8')));
    socket.on('error', () => undefined);
    return {
      socket,
      text: () => text,
      async send(...parts: string[]) {
        for (const part of parts) {
          socket.write(part);
          await sleep(20);
        }
      },
      /** Status codes of the replies so far. */
      statuses: () => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1])),
    };
  }

  it('is the stack it says: who serves the chat path, and which client calls the upstream', async () => {
    const before = fastifySaw;
    await m.client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'who' }] });
    expect(fastifySaw - before).toBe(gateway.httpLayer === 'fastify' ? 1 : 0);
    const client = h.app.app.services.registry.get('svc-2.1-fast')!.deployments[0]!.chat;
    expect(client).toBeInstanceOf(gateway.upstreamClient === 'pool' ? Http1Pool : UndiciChatClient);
  });

  it('answers pipelined requests on one connection, in order', async () => {
    const c = await open(h.app.url);
    await c.send(post(m.key, chatBody('one')) + post(m.key, chatBody('two')) + post(m.key, chatBody('three')));
    await expect.poll(() => c.statuses(), { timeout: 10_000 }).toEqual([200, 200, 200]);
    expect([...c.text().matchAll(/"object":"chat\.completion"/g)]).toHaveLength(3);
    c.socket.destroy();
  });

  it('takes a request split across packets, inside a header and inside the body, then another on the same connection', async () => {
    const c = await open(h.app.url);
    const wire = post(m.key, chatBody('split'));
    const at = wire.indexOf('authorization') + 8;
    const body = wire.indexOf('\r\n\r\n') + 10;
    await c.send(wire.slice(0, at), wire.slice(at, body), wire.slice(body));
    await expect.poll(() => c.statuses(), { timeout: 10_000 }).toEqual([200]);
    await c.send(post(m.key, chatBody('again')));
    await expect.poll(() => c.statuses(), { timeout: 10_000 }).toEqual([200, 200]);
    c.socket.destroy();
  });

  it('takes a chunked request body', async () => {
    const c = await open(h.app.url);
    const body = chatBody('chunked');
    const half = body.length >> 1;
    const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: svc\r\nauthorization: Bearer ${m.key}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
    await c.send(head, `${half.toString(16)}\r\n${body.slice(0, half)}\r\n`, `${(body.length - half).toString(16)}\r\n${body.slice(half)}\r\n0\r\n\r\n`);
    await expect.poll(() => c.statuses(), { timeout: 10_000 }).toEqual([200]);
    c.socket.destroy();
  });

  it('streams as chunked SSE ended by its last chunk, and a client that leaves mid-stream aborts the upstream call', async () => {
    const whole = await open(h.app.url);
    await whole.send(post(m.key, chatBody('#script {"chunks":3,"intervalMs":5}', { stream: true })));
    await expect.poll(() => whole.text().endsWith('0\r\n\r\n'), { timeout: 10_000 }).toBe(true);
    expect(whole.text()).toMatch(/transfer-encoding: chunked/i);
    expect(whole.text()).toContain('data: [DONE]');
    whole.socket.destroy();

    const aborted = h.upstream.stats.aborted;
    const leaving = await open(h.app.url);
    await leaving.send(post(m.key, chatBody('#script {"chunks":200,"intervalMs":50}', { stream: true })));
    await expect.poll(() => leaving.text().includes('"content"'), { timeout: 10_000 }).toBe(true);
    leaving.socket.destroy();
    await expect.poll(() => h.upstream.stats.aborted, { timeout: 5000 }).toBe(aborted + 1);
  });

  it('an upstream that answers a malformed status line is a 502 upstream_error, not retried', async () => {
    const before = raw.requests();
    const c = await open(rawHarness.app.url);
    await c.send(post(rawMember.key, chatBody('#malformed')));
    await expect.poll(() => c.statuses(), { timeout: 10_000 }).toEqual([502]);
    expect(c.text()).toContain('upstream_error');
    expect(raw.requests() - before).toBe(1);
    c.socket.destroy();
  });

  it('an upstream that resets the connection is tried once more, then the client gets upstream_unavailable', async () => {
    const before = raw.requests();
    const c = await open(rawHarness.app.url);
    await c.send(post(rawMember.key, chatBody('#reset')));
    await expect.poll(() => c.statuses(), { timeout: 10_000 }).toHaveLength(1);
    expect(c.text()).toContain('upstream_unavailable');
    expect(raw.requests() - before).toBe(2);
    c.socket.destroy();
  });

  it('an upstream that never answers is a 504 upstream_timeout after the upstream timeout', async () => {
    const c = await open(rawHarness.app.url);
    const started = Date.now();
    await c.send(post(rawMember.key, chatBody('#silent')));
    await expect.poll(() => c.statuses(), { timeout: 20_000 }).toEqual([504]);
    expect(c.text()).toContain('upstream_timeout');
    // Http1Pool's timer never ends the wait early. undici's headers timeout is a "fast timer": it counts
    // 499 ms ticks and back-dates its start by one tick, so a 600 ms timeout can end ~500 ms after sending.
    expect(Date.now() - started).toBeGreaterThanOrEqual(gateway.upstreamClient === 'pool' ? 595 : 480);
    c.socket.destroy();
  });

  it('an upstream that answers whole is relayed, the connection to it kept alive', async () => {
    const sockets = raw.sockets.filter((socket) => !socket.destroyed).length;
    const c = await open(rawHarness.app.url);
    await c.send(post(rawMember.key, chatBody('fine')));
    await expect.poll(() => c.statuses(), { timeout: 10_000 }).toEqual([200]);
    await c.send(post(rawMember.key, chatBody('fine again')));
    await expect.poll(() => c.statuses(), { timeout: 10_000 }).toEqual([200, 200]);
    expect(raw.sockets.filter((socket) => !socket.destroyed).length - sockets).toBe(1);
    c.socket.destroy();
  });
});
