/**
 * Raw HTTP/1.1 on both ends, for tests of svc's own HTTP code: a TCP (or TLS) server whose replies are the
 * test's own bytes, and one call through a chat client (`Http1Pool`, or undici's pool behind
 * `UndiciChatClient`) with what it heard.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { Dispatcher } from 'undici';
import type { ChatClient } from '../../server/modules/model/undici-client.ts';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface RawServer {
  origin: string;
  sockets: Socket[];
  close(): Promise<void>;
  requests(): number;
}

/**
 * A raw TCP server (TLS with `tls`): `answer` writes the reply bytes itself, so framing and timing are exactly
 * the test's. `host` is what it listens on and what the origin names.
 */
export async function rawServer(answer: (socket: Socket, request: string, index: number) => void, tls?: { cert: Buffer; key: Buffer }, host = '127.0.0.1'): Promise<RawServer> {
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

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  chunks: string[];
  body: string;
}

export interface CallOptions {
  body?: string;
  headers?: Record<string, string>;
  onData?: (controller: Dispatcher.DispatchController, chunk: string) => void;
  onStart?: (controller: Dispatcher.DispatchController) => void;
}

/** One call through `client`; `onData` may act on the controller (pause, abort). */
export function call(client: Pick<ChatClient, 'dispatch'>, options: CallOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const reply: Reply = { status: 0, headers: {}, chunks: [], body: '' };
    client.dispatch(
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
