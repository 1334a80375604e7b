/**
 * What a chat client must do on the wire, whichever it is: svc's own HTTP/1.1 pool (`http1-pool.ts`), or
 * undici's Pool behind `UndiciChatClient` (`gateway.upstreamClient: undici`). Every case runs against both,
 * so the home-made client is held to the library's behaviour and the library to svc's contract (the
 * request-not-sent abort). Framing (content-length, chunked, close-delimited, no body), heads and bodies split
 * across packets, keep-alive reuse and idle close, backpressure, and every way an exchange can fail.
 */
import type { Socket } from 'node:net';
import { errors, Pool, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyUpstreamError, isReset } from '../../../server/metering/upstream-failure.ts';
import { Http1Pool, RequestNotSentError } from '../../../server/modules/model/http1-pool.ts';
import { UndiciChatClient, type ChatClient } from '../../../server/modules/model/undici-client.ts';
import { certificate } from '../../fixtures/tls-certificates.ts';
import { call, rawServer, sleep } from '../../helpers/raw-http.ts';

interface ClientOptions {
  connections: number | null;
  keepAliveTimeoutMs: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  ca?: Buffer;
}

const defaults: ClientOptions = { connections: null, keepAliveTimeoutMs: 30_000, connectTimeoutMs: 2000, headersTimeoutMs: 2000, bodyTimeoutMs: 2000 };

/** Each client as model.registry.ts builds it for an origin. */
const clients: [string, (origin: string, options: ClientOptions) => ChatClient & { shut(): Promise<void> }][] = [
  [
    "svc's Http1Pool",
    (origin, options) => {
      const pool = new Http1Pool(origin, { ...options, keepAliveMaxTimeoutMs: 300_000 });
      return Object.assign(pool, { shut: () => pool.close() });
    },
  ],
  [
    "undici's Pool",
    (origin, options) => {
      const pool = new Pool(origin, {
        connections: options.connections,
        pipelining: 1,
        keepAliveTimeout: options.keepAliveTimeoutMs,
        keepAliveMaxTimeout: 300_000,
        connect: { timeout: options.connectTimeoutMs, ...(options.ca ? { ca: options.ca } : {}) },
        headersTimeout: options.headersTimeoutMs,
        bodyTimeout: options.bodyTimeoutMs,
      });
      return Object.assign(new UndiciChatClient(pool), { shut: () => pool.destroy() });
    },
  ],
];

const localhost = certificate('localhost');
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const chunked = (...parts: string[]) => parts.map((part) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`).join('');

describe.each(clients)('chat client conformance: %s', (name, makeClient) => {
  async function setUp(answer: Parameters<typeof rawServer>[0], options: Partial<ClientOptions> = {}, tls?: Parameters<typeof rawServer>[1]) {
    const server = await rawServer(answer, tls);
    const client = makeClient(server.origin, { ...defaults, ...options });
    closers.push(server.close, () => client.shut());
    return { server, client };
  }

  describe('framing', () => {
    it('sends the method, path, host, headers and a content-length body', async () => {
      let seen = '';
      const { server, client } = await setUp((socket, request) => {
        seen = Buffer.from(request, 'latin1').toString('utf8');
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      });
      expect(await call(client, { body: '{"a":"é"}', headers: { 'x-request-id': 'r1' } })).toMatchObject({ status: 200, body: 'ok' });
      const [head, body] = seen.split('\r\n\r\n') as [string, string];
      const lines = head.toLowerCase().split('\r\n');
      expect(lines[0]).toBe('post /v1/chat/completions http/1.1');
      expect(lines).toEqual(expect.arrayContaining([`host: ${new URL(server.origin).host}`, 'x-request-id: r1', 'content-type: application/json', 'content-length: 10']));
      expect(body).toBe('{"a":"é"}');
    });

    it('decodes a chunked reply split at every byte, with chunk extensions and trailers', async () => {
      const wire = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n, world!!!\r\n0\r\nx-trailer: 1\r\n\r\n';
      const { client } = await setUp(async (socket) => {
        for (const byte of Buffer.from(wire)) {
          socket.write(Buffer.from([byte]));
          await sleep(0);
        }
      });
      const reply = await call(client);
      expect(reply).toMatchObject({ status: 200, body: 'hello, world!!!' });
      expect(reply.headers['content-type']).toBe('text/event-stream');
    });

    it('reads a head split inside its status line and inside a header, and a body split across packets', async () => {
      const { client } = await setUp(async (socket) => {
        for (const part of ['HTTP/1.', '1 200 OK\r\ncontent-ty', 'pe: application/json\r\ncontent-length: 11\r', '\n\r\n{"a"', ':"bcd"}']) {
          socket.write(part);
          await sleep(15);
        }
      });
      const reply = await call(client);
      expect(reply).toMatchObject({ status: 200, body: '{"a":"bcd"}' });
      expect(reply.headers['content-type']).toBe('application/json');
    });

    it('hands each chunk of a stream over as it arrives', async () => {
      const { client } = await setUp(async (socket) => {
        socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
        for (const part of ['data: 1\n\n', 'data: 2\n\n', 'data: [DONE]\n\n']) {
          socket.write(chunked(part));
          await sleep(20);
        }
        socket.write('0\r\n\r\n');
      });
      expect((await call(client)).chunks).toEqual(['data: 1\n\n', 'data: 2\n\n', 'data: [DONE]\n\n']);
    });

    it('reads a close-delimited body; a zero length, 204 and 304 have none', async () => {
      const { client } = await setUp((socket, _request, index) => {
        if (index === 0) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
        else if (index === 1) socket.write('HTTP/1.1 204 No Content\r\n\r\n');
        else if (index === 2) socket.write('HTTP/1.1 304 Not Modified\r\netag: "x"\r\n\r\n');
        else socket.end('HTTP/1.1 200 OK\r\n\r\nuntil the end');
      });
      expect(await call(client)).toMatchObject({ status: 200, body: '' });
      expect(await call(client)).toMatchObject({ status: 204, body: '' });
      expect(await call(client)).toMatchObject({ status: 304, body: '' });
      expect((await call(client)).body).toBe('until the end');
    });

    // RFC 9110 §15.2: a client must parse 1xx answers it did not ask for. undici fails them ("bad response",
    // UND_ERR_SOCKET, which dispatch.ts would retry once as a reset): one place where svc's pool does more.
    it.runIf(name !== "undici's Pool")('skips informational answers (100, 103 with headers) and reads the real one', async () => {
      const { client } = await setUp((socket) => socket.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>; rel=preload\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 1\r\n\r\nx'));
      expect(await call(client)).toMatchObject({ status: 201, body: 'x' });
    });
  });

  describe('keep-alive', () => {
    it('reuses a kept-alive connection, and opens a new one after `connection: close`', async () => {
      const { server, client } = await setUp((socket, _request, index) => {
        socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 1\r\n${index === 1 ? 'connection: close\r\n' : ''}\r\n${index}`);
      });
      for (let i = 0; i < 3; i++) expect((await call(client)).body).toBe(String(i));
      expect(server.sockets).toHaveLength(2);
    });

    it('closes a connection idle for its keep-alive time, and one past the server\'s keep-alive hint', async () => {
      const own = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx'), { keepAliveTimeoutMs: 100 });
      await call(own.client);
      const hinted = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\nkeep-alive: timeout=1\r\n\r\nx'));
      await call(hinted.client);
      await sleep(1200);
      for (const { server } of [own, hinted]) expect(server.sockets[0]!.destroyed || server.sockets[0]!.readableEnded).toBe(true);
      await call(own.client);
      expect(own.server.sockets).toHaveLength(2);
    });

    it.each([
      ['TCP', undefined],
      ['TLS', localhost],
    ])('takes a new connection when the server closed the idle one (%s)', async (_transport, tls) => {
      const { server, client } = await setUp((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx'), { ca: localhost.cert }, tls);
      await call(client);
      await sleep(30);
      expect((await call(client)).body).toBe('x');
      expect(server.sockets).toHaveLength(2);
    });

    it('holds requests beyond the connection cap until a connection is free', async () => {
      const { server, client } = await setUp(async (socket, _request, index) => {
        await sleep(30);
        socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n${index}`);
      }, { connections: 1 });
      const replies = await Promise.all([call(client), call(client), call(client)]);
      expect(replies.map((reply) => reply.body)).toEqual(['0', '1', '2']);
      expect(server.sockets).toHaveLength(1);
    });
  });

  describe('backpressure', () => {
    it('a paused reader stops the reading: the server is held back, not buffered without bound, and all arrives on resume', async () => {
      const piece = 'x'.repeat(64 * 1024);
      const total = 512; // 32 MiB, far beyond what the kernel's socket buffers hold
      let written = 0;
      const { client } = await setUp(async (socket) => {
        socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
        for (let i = 0; i < total; i++) {
          written++;
          if (!socket.write(chunked(piece))) await new Promise((resolve) => socket.once('drain', resolve));
        }
        socket.write('0\r\n\r\n');
      }, { bodyTimeoutMs: 5000 });
      let bytes = 0;
      let atPause = -1;
      let whilePaused = 0;
      let done = false;
      const paused = new Promise<void>((resolve) => {
        void call(client, {
          onData: (controller, chunk) => {
            bytes += chunk.length;
            if (atPause >= 0 && controller.paused) whilePaused += chunk.length;
            if (atPause < 0) {
              atPause = bytes;
              controller.pause();
              setTimeout(() => {
                resolve();
                controller.resume();
              }, 500);
            }
          },
        }).then(() => (done = true));
      });
      await paused;
      // What the server got out while the reader slept: socket buffers' worth, not the whole body.
      expect(written).toBeLessThan(total / 2);
      expect(whilePaused).toBeLessThan(2 * piece.length);
      await expect.poll(() => done, { timeout: 10_000 }).toBe(true);
      expect(bytes).toBe(total * piece.length);
    });

    it.each([
      ['TCP', undefined],
      ['TLS', localhost],
    ])('does not time out a body while its reader has paused it, and reads again on resume (%s)', async (_transport, tls) => {
      const { client } = await setUp(
        async (socket) => {
          socket.write(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${chunked('a')}`);
          await sleep(50);
          socket.write(`${chunked('b')}0\r\n\r\n`);
        },
        { bodyTimeoutMs: 100, ca: localhost.cert },
        tls,
      );
      let paused = false;
      const seenWhilePaused: string[] = [];
      const reply = await call(client, {
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
  });

  describe('errors', () => {
    it.each([
      ['TCP', undefined],
      ['TLS', localhost],
    ])('a connection that dies before the answer, or mid-body, fails with a socket error (%s)', async (_transport, tls) => {
      // Before the answer: the caller retries those once. Mid-body: the reply is cut, never taken for whole.
      const { client } = await setUp(
        (socket, _request, index) => {
          if (index === 0) socket.destroy();
          else socket.write(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${chunked('a')}`, () => setTimeout(() => socket.destroy(), 20));
        },
        { ca: localhost.cert },
        tls,
      );
      await expect(call(client)).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
      await expect(call(client)).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    });

    it('a content-length body cut short by the close is an error, not a short reply', async () => {
      const { client } = await setUp((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'));
      await expect(call(client)).rejects.toBeInstanceOf(Error);
    });

    it('a reset connection fails with an error the dispatcher retries as a reset', async () => {
      const { client } = await setUp((socket) => socket.resetAndDestroy());
      const error = await call(client).then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(isReset(error)).toBe(true);
    });

    it('times out a head that does not come, and a body that falls silent', async () => {
      const { client } = await setUp((socket, _request, index) => {
        if (index === 1) socket.write(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${chunked('a')}`);
      }, { headersTimeoutMs: 200, bodyTimeoutMs: 200 });
      let started = Date.now();
      await expect(call(client)).rejects.toBeInstanceOf(errors.HeadersTimeoutError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      started = Date.now();
      await expect(call(client)).rejects.toBeInstanceOf(errors.BodyTimeoutError);
      // undici counts timeouts in ticks of up to a second; svc's pool in quarters of the timeout.
      expect(Date.now() - started).toBeLessThan(2500);
    });

    it.each([
      ['a malformed status line', 'HTTP/1.1 abc\r\n\r\n'],
      ['a header line without a colon', 'HTTP/1.1 200 OK\r\nnot a header\r\ncontent-length: 0\r\n\r\n'],
      ['a content-length that is no number', 'HTTP/1.1 200 OK\r\ncontent-length: ten\r\n\r\n'],
      ['a chunk size that is no number', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'],
    ])('fails %s as an upstream error, never a reset to retry', async (_what, wire) => {
      const { client } = await setUp((socket) => socket.write(wire));
      const error = await call(client).then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(Error);
      expect(isReset(error)).toBe(false);
      expect(classifyUpstreamError(error).code).toBe('upstream_error');
    });

    it('fails a refused connection with its code', async () => {
      const dead = await rawServer(() => undefined);
      await dead.close();
      const client = makeClient(dead.origin, defaults);
      closers.push(() => client.shut());
      await expect(call(client)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    });

    it('refuses a header value that would smuggle in a line, before anything is sent', async () => {
      const { server, client } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'));
      await expect(call(client, { headers: { 'x-request-id': 'a\r\nx-evil: 1' } })).rejects.toBeInstanceOf(errors.InvalidArgumentError);
      expect(server.requests()).toBe(0);
    });
  });

  describe('aborts', () => {
    it('mid-body: the handler hears the reason and the connection is closed', async () => {
      const { server, client } = await setUp((socket) => socket.write(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${chunked('a')}`));
      const reason = new errors.RequestAbortedError();
      await expect(call(client, { onData: (controller) => controller.abort(reason) })).rejects.toBe(reason);
      await expect.poll(() => server.sockets[0]!.readableEnded || server.sockets[0]!.destroyed).toBe(true);
    });

    it('on the last bytes of a reply: it ends with the error only, and the connection is not reused', async () => {
      const { server, client } = await setUp((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nabc'));
      const reason = new errors.RequestAbortedError();
      let ended = false;
      const failed = new Promise<Error>((resolve) =>
        client.dispatch(
          { method: 'POST', path: '/', headers: {}, body: '' },
          { onResponseData: (controller) => controller.abort(reason), onResponseEnd: () => (ended = true), onResponseError: (_controller, error) => resolve(error) },
        ),
      );
      expect(await failed).toBe(reason);
      await sleep(20);
      expect(ended).toBe(false);
      await call(client);
      expect(server.sockets).toHaveLength(2);
    });

    it('before the request reached the server (a connection still opening, or queued): says it was never sent', async () => {
      const { server, client } = await setUp(() => undefined, { connections: 1 });
      const controllers: Dispatcher.DispatchController[] = [];
      const opening = call(client, { onStart: (controller) => controllers.push(controller) });
      const queued = call(client, { onStart: (controller) => controllers.push(controller) });
      expect(controllers).toHaveLength(2);
      for (const controller of controllers) controller.abort(new errors.RequestAbortedError());
      await expect(opening).rejects.toBeInstanceOf(RequestNotSentError);
      await expect(queued).rejects.toBeInstanceOf(RequestNotSentError);
      await sleep(50);
      expect(server.requests()).toBe(0);
    });

    it('a request that reached the server and is then aborted is not said to be unsent', async () => {
      const arrived: Socket[] = [];
      const { server, client } = await setUp((socket) => arrived.push(socket));
      let controller: Dispatcher.DispatchController | null = null;
      const pending = call(client, { onStart: (c) => (controller = c) });
      await expect.poll(() => arrived.length).toBe(1);
      const reason = new errors.RequestAbortedError();
      controller!.abort(reason);
      await expect(pending).rejects.toBe(reason);
      await expect.poll(() => server.sockets[0]!.readableEnded || server.sockets[0]!.destroyed).toBe(true);
    });
  });
});
