/**
 * What is svc's Http1Pool's own: the exact bytes it sends, what it lets go of, how it closes, what it does with
 * bytes nobody asked for, and TLS (SNI, ALPN, session resumption, certificate checks). What any chat client
 * must do on the wire is in chat-client.conformance.test.ts, against this pool and undici's alike.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { errors, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Http1Pool, RequestNotSentError, type Http1PoolOptions } from '../../../server/modules/model/http1-pool.ts';
import { certificate } from '../../fixtures/tls-certificates.ts';
import { call, rawServer, sleep } from '../../helpers/raw-http.ts';

const localhost = certificate('localhost');
const defaults: Http1PoolOptions = { connections: null, keepAliveTimeoutMs: 30_000, keepAliveMaxTimeoutMs: 300_000, connectTimeoutMs: 2000, headersTimeoutMs: 2000, bodyTimeoutMs: 2000 };

/** A full garbage collection now (V8's `gc`, exposed for this file). */
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
async function setUp(answer: Parameters<typeof rawServer>[0], options: Partial<Http1PoolOptions> = {}, tls?: Parameters<typeof rawServer>[1], host?: string) {
  const server = await rawServer(answer, tls, host);
  const pool = new Http1Pool(server.origin, { ...defaults, ...options });
  closers.push(server.close, () => pool.close());
  return { server, pool };
}

describe('Http1Pool', () => {
  it('sends the request line, host, headers and body as one HTTP/1.1 request', async () => {
    let seen = '';
    const { server, pool } = await setUp((socket, request) => {
      seen = Buffer.from(request, 'latin1').toString('utf8');
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    });
    const reply = await call(pool, { body: '{"a":"é"}', headers: { 'x-request-id': 'r1' } });
    expect(reply).toMatchObject({ status: 200, body: 'ok' });
    const host = new URL(server.origin).host;
    expect(seen).toBe(`POST /v1/chat/completions HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\ncontent-type: application/json\r\nx-request-id: r1\r\ncontent-length: 10\r\n\r\n{"a":"é"}`);
  });

  it('lets go of the request once it is written: a reply that runs on does not keep its bytes', async () => {
    let finish = () => {};
    const { pool } = await setUp((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n');
      finish = () => socket.write('0\r\n\r\n');
    });
    let started = () => {};
    const headers = new Promise<void>((resolve) => (started = resolve));
    let sent: WeakRef<Buffer> | null = null;
    const reply = new Promise<string>((resolve, reject) => {
      let text = '';
      const handler: Dispatcher.DispatchHandler = {
        onResponseStart: () => started(),
        onResponseData: (_controller, chunk) => (text += chunk.toString()),
        onResponseEnd: () => resolve(text),
        onResponseError: (_controller, error) => reject(error),
      };
      sent = send(handler);
    });
    // A body only the pool can reach, as a stream's upstream request is once it is sent.
    function send(handler: Dispatcher.DispatchHandler): WeakRef<Buffer> {
      const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(1000) }] }));
      pool.dispatch({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body }, handler);
      return new WeakRef(body);
    }
    await headers;
    await sleep(10);
    collectGarbage();
    const kept = sent!.deref() !== undefined;
    finish();
    expect(await reply).toBe('hello');
    expect(kept).toBe(false);
  });

  it("lets an idle connection go before the server's keep-alive hint runs out", async () => {
    const { server, pool } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\nkeep-alive: timeout=1\r\n\r\nx'));
    await call(pool);
    await sleep(50);
    expect(server.sockets[0]!.destroyed || server.sockets[0]!.readableEnded).toBe(true);
    await call(pool);
    expect(server.sockets).toHaveLength(2);
  });

  it('bytes after a complete reply (a server answering what was not asked) close the connection; the reply stands', async () => {
    const { server, pool } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nxHTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\ny'));
    expect((await call(pool)).body).toBe('x');
    expect((await call(pool)).body).toBe('x');
    expect(server.sockets).toHaveLength(2);
  });

  it('a silent body fails within 1–1.25 × its timeout (checked in quarters of it)', async () => {
    const { pool } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na\r\n'), { bodyTimeoutMs: 400 });
    let started = 0;
    const failed = call(pool, { onData: () => (started = Date.now()) });
    await expect(failed).rejects.toBeInstanceOf(errors.BodyTimeoutError);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(390);
    expect(waited).toBeLessThan(900);
  });

  it('a head that grows past 64 KiB without ending is malformed, not buffered on', async () => {
    const { pool } = await setUp((socket) => socket.write(`HTTP/1.1 200 OK\r\n${'x-filler: abcdefghijklmnop\r\n'.repeat(4000)}`));
    await expect(call(pool)).rejects.toMatchObject({ code: 'HPE_INVALID', message: expect.stringContaining('too large') });
  });

  it('on close, fails what is queued and lets the reply under way finish', async () => {
    const { pool } = await setUp(async (socket) => {
      await sleep(50);
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx');
    }, { connections: 1 });
    const underWay = call(pool);
    const queued = call(pool);
    await sleep(10);
    await pool.close();
    await expect(queued).rejects.toBeInstanceOf(errors.ClientDestroyedError);
    expect((await underWay).body).toBe('x');
  });

});

describe('Http1Pool over TLS', () => {
  const streamed = async (socket: Socket) => {
    socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
    for (const part of ['data: 1\n\n', 'data: 2\n\n']) {
      socket.write(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
      await sleep(10);
    }
    socket.write('0\r\n\r\n');
  };

  it('streams a chunked reply over https, keeps the connection alive, and speaks http/1.1 to a server that offers h2', async () => {
    const { server, pool } = await setUp(streamed, { ca: localhost.cert }, localhost);
    for (let i = 0; i < 2; i++) expect((await call(pool)).chunks).toEqual(['data: 1\n\n', 'data: 2\n\n']);
    expect(server.sockets).toHaveLength(1);
    expect((server.sockets[0] as TLSSocket).alpnProtocol).toBe('http/1.1');
  });

  it('sends the host name by SNI, and checks the certificate against it', async () => {
    const { server, pool } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'), { ca: localhost.cert }, localhost, 'localhost');
    expect((await call(pool)).body).toBe('ok');
    expect((server.sockets[0] as TLSSocket).servername).toBe('localhost');
  });

  it('resumes the TLS session on a new connection instead of a full handshake', async () => {
    const { server, pool } = await setUp((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 1\r\nconnection: close\r\n\r\nx'), { ca: localhost.cert }, localhost);
    await call(pool);
    await call(pool);
    expect(server.sockets).toHaveLength(2);
    expect((server.sockets[1] as TLSSocket).isSessionReused()).toBe(true);
  });

  it('refuses a certificate Node does not trust, and one for another name, before the request is sent', async () => {
    const untrusted = await setUp(() => undefined, {}, localhost);
    await expect(call(untrusted.pool)).rejects.toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    const elsewhere = certificate('elsewhere');
    const misnamed = await setUp(() => undefined, { ca: elsewhere.cert }, elsewhere);
    await expect(call(misnamed.pool)).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    expect(untrusted.server.requests() + misnamed.server.requests()).toBe(0);
  });

  it('an abort during the TLS handshake says the request was never sent; a handshake that never ends times out', async () => {
    // A TCP server that never answers the handshake: the connection opens, the request waits for TLS.
    const silent = await rawServer(() => undefined);
    closers.push(silent.close);
    const pool = new Http1Pool(silent.origin.replace('http:', 'https:'), { ...defaults, ca: localhost.cert });
    closers.push(() => pool.close());
    const aborted = call(pool, { onStart: (controller) => setTimeout(() => controller.abort(new errors.RequestAbortedError()), 50) });
    await expect(aborted).rejects.toBeInstanceOf(RequestNotSentError);
    expect(silent.sockets).toHaveLength(1);
    // A handshake that never ends is a connect timeout.
    const slow = new Http1Pool(silent.origin.replace('http:', 'https:'), { ...defaults, ca: localhost.cert, connectTimeoutMs: 100 });
    closers.push(() => slow.close());
    await expect(call(slow)).rejects.toBeInstanceOf(errors.ConnectTimeoutError);
  });
});
