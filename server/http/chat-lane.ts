/**
 * The chat lane: `POST /v1/chat/completions` served from node:http ahead of Fastify (issue 16). It is most
 * of a gateway's traffic, and Fastify's own work per request — its request and reply objects, hooks, the
 * content-type parser, the reply's header handling — was ~10 % of svc's CPU per chat request and ~60 µs of
 * a lone request's latency (interleaved A/B against the same tree without the lane).
 *
 * The lane takes only the plain request: that exact path, POST, a JSON content type, a Content-Length
 * within the body limit, and a server that is not shutting down. For it, it does what Fastify and the
 * app's hooks do for every route — request ids, CORS, the body limit and JSON parsing with the same
 * errors, the error envelope, the log line and the metrics — and hands the same handler a request and a
 * reply that carry what the pipeline uses (`HttpRequest`, `HttpReply`). Everything else (a query string,
 * a trailing slash, a chunked or empty body, another content type or method, a closing server) is
 * Fastify's, answered as before. `test/integration/gateway/http-layer.test.ts` holds the two to one
 * behaviour.
 *
 * Other metered paths with the same traffic take the lane too (`routes`): `POST /v1/messages`, which
 * Claude Code sends with a query string (`?beta=true`, which means nothing to svc) and whose errors are
 * Anthropic-shaped, and `POST /v1/responses` (Codex, the Responses clients).
 */
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyBaseLogger } from 'fastify';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { HttpReply, HttpRequest } from '../metering/executor.ts';
import { parseJson } from './body.ts';
import type { Cors } from './cors.ts';
import { errorResponse, logFailure, toAppError, type ErrorShape } from './envelope.ts';
import type { HttpMetrics } from './metrics.ts';
import { requestIdFrom } from '../infra/request-id.ts';
import { requestLine } from './request-log.ts';

/** A path the lane serves besides the chat path. */
export interface LaneRoute {
  path: string;
  handler(request: HttpRequest, reply: HttpReply): Promise<void>;
  /** The API whose error body its failures get. */
  errorShape: ErrorShape;
  /** Also with a query string (ignored). */
  query: boolean;
}

export interface ChatLaneOptions {
  path: string;
  handler(request: HttpRequest, reply: HttpReply): Promise<void>;
  /** Further paths, after the chat path. */
  routes?: LaneRoute[];
  bodyLimit: number;
  cors: Cors | null;
  trustedProxies: readonly string[];
  log: FastifyBaseLogger;
  /** Where the "request completed" line goes (null: `info` lines are off). */
  writeLine: ((line: string) => void) | null;
  metrics: HttpMetrics;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The HTTP server for Fastify's `serverFactory`: the lane's requests to the lane, the rest to Fastify's handler. */
export function chatLaneServer(fastify: Handler, options: ChatLaneOptions, timeouts: { keepAliveTimeout: number; requestTimeout: number }): Server {
  const take = chatLane(options);
  const server = createServer((req, res) => {
    // While closing, Fastify answers 503 and closes the connection.
    if (!server.listening || !take(req, res)) fastify(req, res);
  });
  // What Fastify sets on a server it creates itself.
  server.keepAliveTimeout = timeouts.keepAliveTimeout;
  server.requestTimeout = timeouts.requestTimeout;
  server.setTimeout(0);
  return server;
}

/** Serves `req` and returns true when it is the lane's plain case; false leaves it untouched. */
function chatLane(options: ChatLaneOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { bodyLimit, cors, log, writeLine, metrics } = options;
  const trusted = options.trustedProxies.length > 0 ? proxyAddr.compile([...options.trustedProxies]) : null;
  const routes: LaneRoute[] = [{ path: options.path, handler: options.handler, errorShape: 'svc', query: false }, ...(options.routes ?? [])];
  return (req, res) => {
    if (req.method !== 'POST') return false;
    const route = routeOf(routes, req.url);
    if (route === null) return false;
    const { path, handler, errorShape } = route;
    const { headers } = req;
    const length = Number(headers['content-length']);
    if (!(length > 0 && length <= bodyLimit) || headers['transfer-encoding'] !== undefined || !isJson(headers['content-type'])) return false;

    const started = performance.now();
    const id = requestIdFrom(headers['x-svc-request-id']);
    const ip = trusted === null ? (req.socket.remoteAddress ?? '') : (proxyAddr.all(req, trusted).at(-1) ?? '');
    const reply = new LaneReply(res, ['x-svc-request-id', id, 'x-request-id', id]);
    const origin = headers.origin;
    if (cors !== null && origin !== undefined) cors.apply(res, origin);
    // 'prefinish' (the reply handed to the socket), not 'finish': Node keeps its own 'finish' listener on every
    // response, and a second one makes a two-element listener array. Once V8 pretenures the site that makes
    // those arrays, each request's array is born old and drags the request through scavenges (docs/performance.md,
    // "Memory"). `on`, not `once`: each fires once, and `once` allocates a wrapper per request.
    res.on('prefinish', () => {
      const ms = performance.now() - started;
      metrics.observe('POST', path, res.statusCode, ms / 1000);
      writeLine?.(requestLine(id, 'POST', path, ip, res.statusCode, ms));
    });

    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const request = new LaneRequest(id, ip, headers, log);
      const fail = (error: unknown) => {
        // A client that went away is nobody to answer; a reply already under way can only be cut.
        if (res.destroyed) return;
        if (res.headersSent) {
          res.destroy();
          return;
        }
        const appError = toAppError(error);
        logFailure(request.log, error, appError);
        const envelope = errorResponse(appError, id, performance.now() - started, errorShape);
        reply.commit();
        // Its length, as Fastify's error replies say it (not chunked).
        envelope.headers['content-length'] = String(Buffer.byteLength(envelope.body));
        res.writeHead(envelope.status, envelope.headers).end(envelope.body);
      };
      try {
        request.rawBody = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
        // `fail` lives as long as the turn and shares this scope: the chunks are let go here, the bytes by the surface.
        parts.length = 0;
        request.body = parseJson(request.rawBody.toString('utf8'));
      } catch (error) {
        fail(error);
        return;
      }
      handler(request, reply).catch(fail);
    });
    return true;
  };
}

/** The route for `url`: its exact path, or (where the route allows one) its path and a query string. */
function routeOf(routes: LaneRoute[], url: string | undefined): LaneRoute | null {
  if (url === undefined) return null;
  for (const route of routes) {
    const { path } = route;
    if (url === path || (route.query && url.startsWith(path) && url.charCodeAt(path.length) === 63 /* ? */)) return route;
  }
  return null;
}

/** `application/json`, with or without parameters; other spellings are left to Fastify's parser. */
function isJson(type: string | undefined): boolean {
  return type !== undefined && type.startsWith('application/json') && (type.length === 16 || type.charCodeAt(16) === 59 /* ; */);
}

class LaneRequest implements HttpRequest {
  readonly id: string;
  readonly ip: string;
  readonly headers: IncomingHttpHeaders;
  body: unknown = undefined;
  rawBody: Buffer | undefined = undefined;
  readonly #root: FastifyBaseLogger;
  #log: FastifyBaseLogger | null = null;

  constructor(id: string, ip: string, headers: IncomingHttpHeaders, root: FastifyBaseLogger) {
    this.id = id;
    this.ip = ip;
    this.headers = headers;
    this.#root = root;
  }

  /** A child logger with the request id, as Fastify's `request.log`, made only when something is logged. */
  get log(): FastifyBaseLogger {
    return (this.#log ??= this.#root.child({ requestId: this.id }));
  }
}

/**
 * The reply's headers are kept as name/value pairs and handed to `writeHead` with the body, which takes
 * them in one pass (`setHeader` validates and stores each one, then the head is built from the store).
 * An executor that writes `raw` itself, or an error, gets them on `raw` first (`commit`).
 */
class LaneReply implements HttpReply {
  readonly raw: ServerResponse;
  readonly #headers: string[];

  constructor(raw: ServerResponse, headers: string[]) {
    this.raw = raw;
    this.#headers = headers;
  }

  hijack(): this {
    this.commit();
    return this;
  }

  header(name: string, value: string): this {
    this.#headers.push(name, value);
    return this;
  }

  headers(values: Record<string, string>): this {
    for (const name in values) this.#headers.push(name, values[name]!);
    return this;
  }

  /** As Fastify's: a JSON type without a charset is sent as UTF-8 and says so. */
  type(contentType: string): this {
    const utf8 = contentType.includes('json') && !contentType.toLowerCase().includes('charset');
    this.#headers.push('content-type', utf8 ? `${contentType}; charset=utf-8` : contentType);
    return this;
  }

  send(body: string): this {
    // The head is built here, before `end` could count the body: say its length, or it goes chunked.
    this.#headers.push('content-length', String(Buffer.byteLength(body)));
    this.raw.writeHead(200, this.#headers).end(body);
    return this;
  }

  /**
   * A stream's head: the headers gathered so far and `headers`, in one flat list for `writeHead`. Put on `raw`
   * with `setHeader` first (`hijack`), each one was validated and stored in an object per name, and
   * `writeHead` then merged the rest in the same way: ~5 KB allocated per stream.
   */
  head(status: number, headers: Record<string, string>): void {
    const list = this.#headers;
    const own = list.length;
    for (const name in headers) {
      // A name the reply already has takes the new value, as `setHeader` would (names here are lower case).
      let at = 0;
      while (at < own && list[at] !== name) at += 2;
      if (at < own) list[at + 1] = headers[name]!;
      else list.push(name, headers[name]!);
    }
    this.raw.writeHead(status, list);
    list.length = 0;
  }

  /** Puts the headers gathered so far on `raw`, for a head written elsewhere. */
  commit(): void {
    const headers = this.#headers;
    for (let i = 0; i < headers.length; i += 2) this.raw.setHeader(headers[i]!, headers[i + 1]!);
    headers.length = 0;
  }
}
