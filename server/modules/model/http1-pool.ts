/**
 * A lean HTTP/1.1 client for model servers, over plain TCP or TLS: what `dispatch.ts` sends chat calls
 * through, streamed and whole. It is the part of undici's `Pool` that dispatch.ts uses —
 * `dispatch(request, handler)` with undici's handler API and undici's error types — over sockets read with
 * `onread`: each read lands in one shared buffer and is parsed in the callback, so a relayed chunk passes no
 * Readable, no WebAssembly parser and no request object of undici's. Against undici's dispatch API,
 * interleaved on the benchmark's machine: CPU per relayed chunk at 500 streams 31.9 → 27.3 µs, per
 * non-streaming request under load 105 → 84 µs, and a similar saving over TLS (docs/performance.md). The
 * media executors' calls stay on undici.
 *
 * What it does:
 * - keeps connections alive per origin, reused last-in first-out, closed after the server's keep-alive hint
 *   (less a second) or `keepAliveTimeoutMs` idle; an optional cap on connections, with a queue;
 * - frames a reply by chunked encoding, `content-length` or the connection's close; skips 1xx answers;
 * - times out: connecting, the whole head (`headersTimeoutMs`), a silent body (`bodyTimeoutMs`). The body's
 *   silence is checked in quarters of the timeout, not per chunk, so it fails after 1–1.25 × the timeout;
 * - pauses and resumes reading for the client's backpressure; aborts;
 * - for `https:`, connects with Node's TLS defaults (the certificate checked against Node's CAs and the host
 *   name, SNI), offers only `http/1.1` by ALPN, and resumes the last TLS session on a new connection.
 * A connection that dies before the answer fails with undici's `SocketError` (`UND_ERR_SOCKET`), which the
 * caller retries once, as with undici (a stale keep-alive socket).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { connect, isIP, type OnReadOpts, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import { errors, type Dispatcher } from 'undici';

export interface Http1PoolOptions {
  /** Most sockets at once; null = no cap. */
  connections: number | null;
  keepAliveTimeoutMs: number;
  keepAliveMaxTimeoutMs: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Certificates to trust besides Node's own, for `https:` (what `NODE_EXTRA_CA_CERTS` does process-wide). */
  ca?: string | Buffer;
}

export interface Http1Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

/**
 * An aborted request that never reached the upstream: nothing of it was sent, so nothing can be billed. Not a
 * subclass of undici's `RequestAbortedError`, whose `instanceof` answers true for any of undici's aborts.
 */
export class RequestNotSentError extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor(cause: Error) {
    super(`request aborted before it was sent: ${cause.message}`, { cause });
    this.name = 'RequestNotSentError';
  }
}

/** Where every socket's reads land. Reads are parsed as they arrive; what is kept is copied out. */
const READS = Buffer.allocUnsafe(64 * 1024);
/** A head larger than this is not a model server's answer. */
const MAX_HEAD = 64 * 1024;
const FORBIDDEN_IN_HEADER = /[\r\n\0]/;

/** An exchange's time limits, counted in ticks of a quarter of the shorter timeout. */
interface Limits {
  tickMs: number;
  /** Ticks the whole head may take. */
  headTicks: number;
  /** Ticks without a byte the body may stay silent (not counted while paused). */
  silentTicks: number;
}

// Where a reply's parse is.
const HEAD = 0;
const CHUNK_SIZE = 1;
const CHUNK_EXTENSION = 2;
const CHUNK_DATA = 3;
const CHUNK_END = 4;
const TRAILERS = 5;
const LENGTH = 6;
const UNTIL_CLOSE = 7;
const OVER = 8;

/** Where a pool's connections go: host, port and, for `https:`, what TLS needs. */
interface Endpoint {
  host: string;
  port: number;
  tls: { servername: string | undefined; ca: string | Buffer | undefined } | null;
}

export class Http1Pool {
  readonly #endpoint: Endpoint;
  readonly #hostHeader: string;
  readonly #options: Http1PoolOptions;
  readonly #limits: Limits;
  readonly #idle: Connection[] = [];
  readonly #waiting: Exchange[] = [];
  #sockets = 0;
  #closed = false;
  /** The last TLS session the origin gave: a new connection resumes it instead of a full handshake. */
  tlsSession: Buffer | undefined;

  constructor(origin: string, options: Http1PoolOptions) {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`Http1Pool takes http: and https: origins, not ${url.protocol}`);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const secure = url.protocol === 'https:';
    this.#endpoint = {
      host,
      port: Number(url.port || (secure ? 443 : 80)),
      // SNI takes a host name, never an address; the certificate is checked against either.
      tls: secure ? { servername: isIP(host) ? undefined : host, ca: options.ca } : null,
    };
    this.#hostHeader = url.host;
    this.#options = options;
    const tickMs = Math.max(1, Math.ceil(Math.min(options.headersTimeoutMs, options.bodyTimeoutMs) / 4));
    this.#limits = { tickMs, headTicks: Math.ceil(options.headersTimeoutMs / tickMs), silentTicks: Math.ceil(options.bodyTimeoutMs / tickMs) };
  }

  /** Sends `request`; `handler` hears the reply (undici's handler API). Always true: the queue has no limit. */
  dispatch(request: Http1Request, handler: Dispatcher.DispatchHandler): boolean {
    let head: string;
    try {
      head = this.#head(request);
    } catch (error) {
      new Exchange(this, '', request.body, handler, this.#limits).fail(error as Error);
      return true;
    }
    const exchange = new Exchange(this, head, request.body, handler, this.#limits);
    handler.onRequestStart?.(exchange, {});
    if (exchange.over) return true;
    if (this.#closed) {
      exchange.fail(new errors.ClientDestroyedError());
      return true;
    }
    const connection = this.#take();
    if (connection) exchange.start(connection);
    else this.#waiting.push(exchange);
    return true;
  }

  /** Closes idle connections now and the others when their reply ends; queued requests fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const connection of this.#idle.splice(0)) connection.socket.destroy();
    for (const exchange of this.#waiting.splice(0)) exchange.fail(new errors.ClientDestroyedError());
  }

  /** A connection whose reply ended cleanly: the next queued request, or idle. */
  release(connection: Connection, keepAliveMs: number | null): void {
    if (this.#closed || connection.socket.destroyed) {
      connection.socket.destroy();
      return;
    }
    const next = this.#waiting.shift();
    if (next) {
      next.start(connection);
      return;
    }
    connection.idle(Math.min(keepAliveMs ?? this.#options.keepAliveTimeoutMs, this.#options.keepAliveMaxTimeoutMs));
    this.#idle.push(connection);
  }

  /** A socket is gone: out of the idle list, and its place for a queued request. */
  closed(connection: Connection): void {
    this.#sockets--;
    const at = this.#idle.indexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
    if (this.#waiting.length > 0) {
      const fresh = this.#take();
      if (fresh) this.#waiting.shift()!.start(fresh);
    }
  }

  /** Dropped from the queue (aborted while waiting). */
  unqueue(exchange: Exchange): void {
    const at = this.#waiting.indexOf(exchange);
    if (at >= 0) this.#waiting.splice(at, 1);
  }

  #take(): Connection | null {
    while (this.#idle.length > 0) {
      const connection = this.#idle.pop()!;
      if (!connection.socket.destroyed) return connection;
    }
    const cap = this.#options.connections;
    if (cap !== null && this.#sockets >= cap) return null;
    this.#sockets++;
    return new Connection(this, this.#endpoint, this.#options.connectTimeoutMs);
  }

  /** The request line and headers, checked: a value with a line break would smuggle a header in. */
  #head(request: Http1Request): string {
    if (request.path[0] !== '/' || /[\s\0]/.test(request.path)) throw new errors.InvalidArgumentError(`invalid request path ${JSON.stringify(request.path)}`);
    let head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${this.#hostHeader}\r\nconnection: keep-alive\r\n`;
    const { headers } = request;
    for (const name in headers) {
      const value = headers[name]!;
      if (FORBIDDEN_IN_HEADER.test(value) || FORBIDDEN_IN_HEADER.test(name)) throw new errors.InvalidArgumentError(`invalid ${name} header`);
      head += `${name}: ${value}\r\n`;
    }
    return `${head}content-length: ${Buffer.byteLength(request.body)}\r\n\r\n`;
  }
}

/** One socket to the origin, carrying one exchange at a time. */
class Connection {
  readonly socket: Socket;
  readonly #pool: Http1Pool;
  exchange: Exchange | null = null;
  connected = false;
  #paused = false;
  #idleTimer: NodeJS.Timeout | null = null;
  #connectTimer: NodeJS.Timeout | null;

  constructor(pool: Http1Pool, endpoint: Endpoint, connectTimeoutMs: number) {
    this.#pool = pool;
    const { host, port, tls } = endpoint;
    const onread: OnReadOpts = {
      buffer: READS,
      callback: (length: number, buffer: Uint8Array) => {
        const exchange = this.exchange;
        // Bytes nobody asked for (after a reply, or on an idle socket): the connection is not in a known state.
        if (exchange === null) this.socket.destroy();
        else {
          try {
            exchange.read(buffer as Buffer, length);
          } catch (error) {
            // A handler that threw: its exchange ends with that error, not the process.
            exchange.fail(error as Error);
          }
        }
        return true;
      },
    };
    if (tls) {
      // `onread` is net.Socket's, which Node's TLS socket honours; @types/node leaves it out of tls's options.
      const options: ConnectionOptions & { onread: OnReadOpts } = { host, port, ...tls, session: pool.tlsSession, ALPNProtocols: ['http/1.1'], onread };
      this.socket = connectTls(options);
      this.socket.setNoDelay(true);
      this.socket.setKeepAlive(true, 60_000);
      this.socket.on('session', (session: Buffer) => (pool.tlsSession = session));
    } else this.socket = connect({ host, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000, onread });
    // Until then the request's bytes are Node's (TLS: until the handshake is done and the certificate checked).
    this.#connectTimer = setTimeout(() => {
      if (!this.connected) this.socket.destroy(new errors.ConnectTimeoutError());
    }, connectTimeoutMs).unref();
    this.socket.once(tls ? 'secureConnect' : 'connect', () => {
      this.connected = true;
      clearTimeout(this.#connectTimer!);
      this.#connectTimer = null;
    });
    this.socket.on('error', (error) => this.exchange?.fail(error));
    // The server ended its side: a close-delimited reply is complete, anything else was cut.
    this.socket.on('end', () => this.exchange?.ended());
    this.socket.once('close', () => {
      if (this.#connectTimer) clearTimeout(this.#connectTimer);
      if (this.#idleTimer) clearTimeout(this.#idleTimer);
      this.exchange?.fail(new errors.SocketError('other side closed'));
      this.#pool.closed(this);
    });
  }

  /** Stops or restarts reading the socket (the exchange's backpressure); the next exchange sets it afresh. */
  readsPaused(paused: boolean): void {
    if (paused === this.#paused) return;
    this.#paused = paused;
    if (paused) this.socket.pause();
    else this.socket.resume();
  }

  /** Waiting for the next request: it does not keep the process alive. */
  idle(keepAliveMs: number): void {
    this.#idleTimer = setTimeout(() => this.socket.destroy(), keepAliveMs).unref();
    this.socket.unref();
  }

  busy(exchange: Exchange): void {
    if (this.#idleTimer) {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = null;
      this.socket.ref();
    }
    this.exchange = exchange;
  }
}

/** One request and its reply: the parser, and the controller undici's handler API hands the handler. */
class Exchange implements Dispatcher.DispatchController {
  readonly #pool: Http1Pool;
  /** The request's head and body, until they are written: then the socket's (see `start`). */
  #head: string;
  #body: string | Buffer;
  readonly #handler: Dispatcher.DispatchHandler;
  readonly #limits: Limits;
  #connection: Connection | null = null;
  #timer: NodeJS.Timeout | null = null;
  #ticks = 0;
  #progress = 0;
  #seen = 0;
  #phase = HEAD;
  #headText = '';
  /** Bytes left in the current chunk, or of a `content-length` body; the size being read in CHUNK_SIZE. */
  #left = 0;
  #sizeDigits = 0;
  #lineLength = 0;
  #keepAliveMs: number | null = null;
  #reusable = true;
  #aborted = false;
  #paused = false;
  #reason: Error | null = null;
  over = false;

  constructor(pool: Http1Pool, head: string, body: string | Buffer, handler: Dispatcher.DispatchHandler, limits: Limits) {
    this.#pool = pool;
    this.#head = head;
    this.#body = body;
    this.#handler = handler;
    this.#limits = limits;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get paused(): boolean {
    return this.#paused;
  }

  get reason(): Error | null {
    return this.#reason;
  }

  abort(reason: Error): void {
    if (this.over) return;
    this.#aborted = true;
    this.#reason = reason;
    // Written to a socket still connecting (or never to one): the bytes are Node's until it connects.
    this.fail(this.#connection?.connected ? reason : new RequestNotSentError(reason));
  }

  pause(): void {
    this.#paused = true;
    this.#connection?.readsPaused(true);
  }

  resume(): void {
    this.#paused = false;
    this.#connection?.readsPaused(false);
  }

  start(connection: Connection): void {
    this.#connection = connection;
    connection.busy(this);
    // A reply may end inside the read its handler paused on: the next exchange on the socket reads again.
    connection.readsPaused(this.#paused);
    this.#timer = setInterval(() => this.#tick(), this.#limits.tickMs).unref();
    const head = this.#head;
    const body = this.#body;
    // Let go once written: a stream's reply runs for seconds, and a small body is a slice of Node's shared
    // Buffer pool (64 KiB slabs in Node 24), which it would keep whole: ~12 MB of slabs at 500 open streams.
    this.#head = '';
    this.#body = '';
    connection.socket.write(typeof body === 'string' ? head + body : Buffer.concat([Buffer.from(head, 'latin1'), body]));
  }

  /** The time limits, checked every quarter of the shorter one: the head's whole wait, the body's silence. */
  #tick(): void {
    if (this.#phase === HEAD) {
      if (++this.#ticks >= this.#limits.headTicks) this.fail(this.#connection?.connected === false ? new errors.ConnectTimeoutError() : new errors.HeadersTimeoutError());
    } else if (this.#progress !== this.#seen || this.#paused) {
      this.#seen = this.#progress;
      this.#ticks = 0;
    } else if (++this.#ticks >= this.#limits.silentTicks) this.fail(new errors.BodyTimeoutError());
  }

  /** `length` bytes just read into `buffer` (shared: valid until this returns). */
  read(buffer: Buffer, length: number): void {
    this.#progress++;
    let at = 0;
    while (at < length && !this.over) {
      switch (this.#phase) {
        case HEAD:
          at = this.#readHead(buffer, at, length);
          break;
        case CHUNK_SIZE: {
          const byte = buffer[at++]!;
          const digit = byte >= 48 && byte <= 57 ? byte - 48 : (byte | 32) >= 97 && (byte | 32) <= 102 ? (byte | 32) - 87 : -1;
          if (digit >= 0 && this.#sizeDigits < 12) {
            this.#left = this.#left * 16 + digit;
            this.#sizeDigits++;
          } else if (byte === 10 && this.#sizeDigits > 0) this.#endSizeLine();
          else if (byte === 59 /* ; */ && this.#sizeDigits > 0) this.#phase = CHUNK_EXTENSION;
          else if (byte !== 13 && byte !== 32 && byte !== 9) this.#malformed('invalid chunk size');
          break;
        }
        case CHUNK_EXTENSION:
          if (buffer[at++] === 10) this.#endSizeLine();
          break;
        case CHUNK_DATA:
        case LENGTH: {
          const end = Math.min(length, at + this.#left);
          this.#left -= end - at;
          this.#deliver(buffer, at, end);
          at = end;
          if (this.#left === 0) {
            if (this.#phase === LENGTH) this.#finish(at < length);
            else this.#phase = CHUNK_END;
          }
          break;
        }
        case CHUNK_END: {
          const byte = buffer[at++]!;
          if (byte === 10) this.#startSizeLine();
          else if (byte !== 13) this.#malformed('chunk without its CRLF');
          break;
        }
        case TRAILERS: {
          const byte = buffer[at++]!;
          if (byte === 10) {
            if (this.#lineLength === 0) this.#finish(at < length);
            this.#lineLength = 0;
          } else if (byte !== 13) this.#lineLength++;
          break;
        }
        case UNTIL_CLOSE:
          this.#deliver(buffer, at, length);
          at = length;
          break;
      }
    }
  }

  /** The server ended its side of the connection. */
  ended(): void {
    if (this.#phase === UNTIL_CLOSE) {
      this.#reusable = false;
      this.#finish(false);
    } else this.fail(new errors.SocketError('other side closed'));
  }

  /** Ends the exchange with `error` (once): the socket is not reused. */
  fail(error: Error): void {
    if (this.over) return;
    this.over = true;
    this.#phase = OVER;
    if (this.#timer) clearInterval(this.#timer);
    const connection = this.#connection;
    if (connection) {
      connection.exchange = null;
      connection.socket.destroy();
    } else this.#pool.unqueue(this);
    this.#handler.onResponseError?.(this, error);
  }

  #readHead(buffer: Buffer, at: number, length: number): number {
    const before = this.#headText.length;
    const text = this.#headText + buffer.toString('latin1', at, length);
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) {
      if (text.length > MAX_HEAD) this.#malformed('response head too large');
      else this.#headText = text;
      return length;
    }
    this.#headText = '';
    const next = at + end + 4 - before;
    const lines = text.slice(0, end).split('\r\n');
    const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]!);
    if (!status) {
      this.#malformed('invalid status line');
      return length;
    }
    const code = Number(status[2]);
    // An informational answer (100 Continue, 103 Early Hints): the real one follows.
    if (code < 200) return next;
    const headers: IncomingHttpHeaders = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0) {
        this.#malformed('invalid header line');
        return length;
      }
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      const had = headers[name];
      if (name === 'set-cookie') headers[name] = [...((had as string[] | undefined) ?? []), value];
      else headers[name] = had === undefined ? value : `${had as string}, ${value}`;
    }
    this.#frame(code, status[1] === '1', headers);
    if (this.over) return length;
    this.#ticks = 0;
    this.#handler.onResponseStart?.(this, code, headers, status[3] ?? '');
    if (!this.over && this.#phase === OVER) this.#finish(next < length);
    return next;
  }

  /** How the body is delimited, and whether the connection may carry another request after it. */
  #frame(code: number, http11: boolean, headers: IncomingHttpHeaders): void {
    const connection = (headers.connection as string | undefined)?.toLowerCase() ?? '';
    this.#reusable = http11 && !connection.includes('close');
    const hint = /timeout=(\d+)/i.exec((headers['keep-alive'] as string | undefined) ?? '');
    if (hint) this.#keepAliveMs = Math.max(0, Number(hint[1]) * 1000 - 1000);
    const length = headers['content-length'] as string | undefined;
    if (code === 204 || code === 304) this.#phase = OVER;
    else if (((headers['transfer-encoding'] as string | undefined) ?? '').toLowerCase().includes('chunked')) this.#startSizeLine();
    else if (length !== undefined) {
      if (!/^\d+$/.test(length)) this.#malformed('invalid content-length');
      this.#left = Number(length);
      this.#phase = this.#left === 0 ? OVER : LENGTH;
    } else {
      this.#reusable = false;
      this.#phase = UNTIL_CLOSE;
    }
  }

  #startSizeLine(): void {
    this.#phase = CHUNK_SIZE;
    this.#left = 0;
    this.#sizeDigits = 0;
  }

  #endSizeLine(): void {
    if (this.#left > 0) this.#phase = CHUNK_DATA;
    else {
      this.#phase = TRAILERS;
      this.#lineLength = 0;
    }
  }

  #deliver(buffer: Buffer, from: number, to: number): void {
    if (to <= from) return;
    // The read buffer is shared: the handler gets bytes of its own (a slice of Node's pool, for small chunks).
    const bytes = Buffer.allocUnsafe(to - from);
    buffer.copy(bytes, 0, from, to);
    this.#handler.onResponseData?.(this, bytes);
  }

  /** The reply is complete: the connection goes back to the pool (unless more bytes followed it), then the handler hears. */
  #finish(trailing: boolean): void {
    this.over = true;
    this.#phase = OVER;
    if (this.#timer) clearInterval(this.#timer);
    const connection = this.#connection!;
    connection.exchange = null;
    if (this.#reusable && !trailing) this.#pool.release(connection, this.#keepAliveMs);
    else connection.socket.destroy();
    this.#handler.onResponseEnd?.(this, {});
  }

  #malformed(what: string): void {
    const error = Object.assign(new Error(`The upstream's HTTP response is malformed: ${what}.`), { code: 'HPE_INVALID' });
    this.fail(error);
  }
}
