import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { errors, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Http1Pool, RequestNotSentError, type Http1PoolOptions } from '../../../server/modules/model/http1-pool.ts';
import { certificate } from '../../fixtures/tls-certificates.ts';

/**
 * A raw TCP server (TLS with `tls`): `answer` writes the reply bytes itself, so framing and timing are exactly
 * the test's. `host` is what it listens on and what the origin names.
 */
async function rawServer(answer: (socket: Socket, request: string, index: number) => void, tls?: { cert: Buffer; key: Buffer }, host = '127.0.0.1') {
  const sockets: Socket[] = [];
  let requests = 0;
  const onConnection = (socket: Socket) => {
    sockets.push(socket);
    let pending = '';
    socket.on('data', (data) => {
      pending += data.toString('latin1');
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(pending.slice(0, end))?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const request = pending.slice(0, end + 4 + length);
        pending = pending.slice(end + 4 + length);
        answer(socket, request, requests++);
      }
    });
    socket.on('error', () => undefined);
  };
  const server: Server = tls ? createTlsServer({ ...tls, ALPNProtocols: ['h2', 'http/1.1'] }, onConnection) : createServer(onConnection);
  // A client that refuses the certificate ends the handshake: the server hears it as an error, not the test.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  const close = () => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return { origin: `${tls ? 'https' : 'http'}://${host}:${port}`, sockets, close, requests: () => requests };
}

const localhost = certificate('localhost');
const defaults: Http1PoolOptions = { connections: null, keepAliveTimeoutMs: 30_000, keepAliveMaxTimeoutMs: 300_000, connectTimeoutMs: 2000, headersTimeoutMs: 2000, bodyTimeoutMs: 2000 };

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  chunks: string[];
  body: string;
}

/** One call through the pool; `onData` may act on the controller (pause, abort). */
function call(pool: Http1Pool, options: { body?: string; headers?: Record<string, string>; onData?: (controller: Dispatcher.DispatchController, chunk: string) => void; onStart?: (controller: Dispatcher.DispatchController) => void } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const reply: Reply = { status: 0, headers: {}, chunks: [], body: '' };
    pool.dispatch(
      { method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', ...options.headers }, body: options.body ?? '{}' },
      {
        onRequestStart: (controller) => options.onStart?.(controller),
        onResponseStart: (_controller, status, headers) => Object.assign(reply, { status, headers }),
        onResponseData: (controller, chunk) => {
          reply.chunks.push(chunk.toString());
          reply.body += chunk.toString();
          options.onData?.(controller, chunk.toString());
        },
        onResponseEnd: () => resolve(reply),
        onResponseError: (_controller, error) => reject(error),
      },
    );
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
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

  it('decodes a chunked reply split at every byte, with chunk extensions and trailers', async () => {
    const wire = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n, world!!!\r\n0\r\nx-trailer: 1\r\n\r\n';
    const { pool } = await setUp(async (socket) => {
      for (const byte of Buffer.from(wire)) {
        socket.write(Buffer.from([byte]));
        await sleep(0);
      }
    });
    const reply = await call(pool);
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('text/event-stream');
    expect(reply.body).toBe('hello, world!!!');
  });

  it('hands each chunk of a stream over as it arrives, as a buffer of its own', async () => {
    const { pool } = await setUp(async (socket) => {
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
      for (const part of ['data: 1\n\n', 'data: 2\n\n', 'data: [DONE]\n\n']) {
        socket.write(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
        await sleep(20);
      }
      socket.write('0\r\n\r\n');
    });
    const reply = await call(pool);
    expect(reply.chunks).toEqual(['data: 1\n\n', 'data: 2\n\n', 'data: [DONE]\n\n']);
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

  it('reads content-length and close-delimited bodies, and no body for 204', async () => {
    const { pool } = await setUp((socket, _request, index) => {
      if (index === 0) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nabcde');
      else if (index === 1) socket.write('HTTP/1.1 204 No Content\r\n\r\n');
      else socket.end('HTTP/1.1 200 OK\r\n\r\nuntil the end');
    });
    expect((await call(pool)).body).toBe('abcde');
    expect(await call(pool)).toMatchObject({ status: 204, body: '' });
    expect((await call(pool)).body).toBe('until the end');
  });

  it('skips an informational answer and reads the real one', async () => {
    const { pool } = await setUp((socket) => socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 1\r\n\r\nx'));
    expect(await call(pool)).toMatchObject({ status: 201, body: 'x' });
  });

  it('reuses a kept-alive connection, and opens a new one after `connection: close`', async () => {
    const { server, pool } = await setUp((socket, _request, index) => {
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 1\r\n${index === 1 ? 'connection: close\r\n' : ''}\r\n${index}`);
    });
    for (let i = 0; i < 3; i++) expect((await call(pool)).body).toBe(String(i));
    expect(server.sockets).toHaveLength(2);
  });

  it("lets an idle connection go before the server's keep-alive hint runs out", async () => {
    const { server, pool } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\nkeep-alive: timeout=1\r\n\r\nx'));
    await call(pool);
    await sleep(50);
    expect(server.sockets[0]!.destroyed || server.sockets[0]!.readableEnded).toBe(true);
    await call(pool);
    expect(server.sockets).toHaveLength(2);
  });

  it.each([
    ['TCP', undefined],
    ['TLS', localhost],
  ])('takes a new connection when the server closed the idle one (%s)', async (_transport, tls) => {
    const { server, pool } = await setUp((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx'), { ca: localhost.cert }, tls);
    await call(pool);
    await sleep(30);
    expect((await call(pool)).body).toBe('x');
    expect(server.sockets).toHaveLength(2);
  });

  it.each([
    ['TCP', undefined],
    ['TLS', localhost],
  ])('fails a request whose connection dies before the answer, or mid-body, with a socket error (%s)', async (_transport, tls) => {
    // Before the answer: the caller retries those once. Mid-body: the reply is cut, never taken for whole.
    const { pool } = await setUp(
      (socket, _request, index) => {
        if (index === 0) socket.destroy();
        else socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na\r\n', () => setTimeout(() => socket.destroy(), 20));
      },
      { ca: localhost.cert },
      tls,
    );
    await expect(call(pool)).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    await expect(call(pool)).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
  });

  it('holds requests beyond the connection cap until a connection is free', async () => {
    const { server, pool } = await setUp(async (socket, _request, index) => {
      await sleep(30);
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n${index}`);
    }, { connections: 1 });
    const replies = await Promise.all([call(pool), call(pool), call(pool)]);
    expect(replies.map((reply) => reply.body)).toEqual(['0', '1', '2']);
    expect(server.sockets).toHaveLength(1);
  });

  it('times out a head that does not come, and a body that falls silent', async () => {
    const { pool } = await setUp((socket, _request, index) => {
      if (index === 1) socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na\r\n');
    }, { headersTimeoutMs: 200, bodyTimeoutMs: 200 });
    let started = Date.now();
    await expect(call(pool)).rejects.toBeInstanceOf(errors.HeadersTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    started = Date.now();
    await expect(call(pool)).rejects.toBeInstanceOf(errors.BodyTimeoutError);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it.each([
    ['TCP', undefined],
    ['TLS', localhost],
  ])('does not time out a body while its reader has paused it, and reads again on resume (%s)', async (_transport, tls) => {
    const { pool } = await setUp(
      async (socket) => {
        socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na\r\n');
        await sleep(50);
        socket.write('1\r\nb\r\n0\r\n\r\n');
      },
      { bodyTimeoutMs: 100, ca: localhost.cert },
      tls,
    );
    let paused = false;
    const seenWhilePaused: string[] = [];
    const reply = await call(pool, {
      onData: (controller, chunk) => {
        if (paused) seenWhilePaused.push(chunk);
        if (chunk === 'a') {
          paused = true;
          controller.pause();
          setTimeout(() => {
            paused = false;
            controller.resume();
          }, 400);
        }
      },
    });
    expect(reply.body).toBe('ab');
    expect(seenWhilePaused).toEqual([]);
  });

  it('aborts mid-body: the handler hears the reason and the connection is closed', async () => {
    const { server, pool } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na\r\n'));
    const reason = new errors.RequestAbortedError();
    await expect(call(pool, { onData: (controller) => controller.abort(reason) })).rejects.toBe(reason);
    await sleep(20);
    expect(server.sockets[0]!.readableEnded || server.sockets[0]!.destroyed).toBe(true);
  });

  it('an abort on the last bytes of a reply ends it with the error only, never also with its end', async () => {
    const { server, pool } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc'));
    const reason = new errors.RequestAbortedError();
    let ended = false;
    const failed = new Promise<Error>((resolve) =>
      pool.dispatch(
        { method: 'POST', path: '/', headers: {}, body: '' },
        { onResponseData: (controller) => controller.abort(reason), onResponseEnd: () => (ended = true), onResponseError: (_controller, error) => resolve(error) },
      ),
    );
    expect(await failed).toBe(reason);
    await sleep(20);
    expect(ended).toBe(false);
    // The aborted connection is not reused.
    await call(pool);
    expect(server.sockets).toHaveLength(2);
  });

  it('says when an aborted request never reached the server: on a connection still opening, or queued', async () => {
    const { server, pool } = await setUp(() => undefined, { connections: 1 });
    const controllers: Dispatcher.DispatchController[] = [];
    const opening = call(pool, { onStart: (controller) => controllers.push(controller) });
    const queued = call(pool, { onStart: (controller) => controllers.push(controller) });
    for (const controller of controllers) controller.abort(new errors.RequestAbortedError());
    await expect(opening).rejects.toBeInstanceOf(RequestNotSentError);
    await expect(queued).rejects.toBeInstanceOf(RequestNotSentError);
    await sleep(20);
    expect(server.requests()).toBe(0);
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

  it('refuses a header value that would smuggle in a line, before anything is sent', async () => {
    const { server, pool } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'));
    await expect(call(pool, { headers: { 'x-request-id': 'a\r\nx-evil: 1' } })).rejects.toBeInstanceOf(errors.InvalidArgumentError);
    expect(server.requests()).toBe(0);
  });

  it('fails a malformed answer with a parse error, and a refused connection with its code', async () => {
    const { pool } = await setUp((socket) => socket.write('HTTP/1.1 abc\r\n\r\n'));
    await expect(call(pool)).rejects.toMatchObject({ code: 'HPE_INVALID' });
    const dead = await rawServer(() => undefined);
    await dead.close();
    const refused = new Http1Pool(dead.origin, defaults);
    await expect(call(refused)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
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
