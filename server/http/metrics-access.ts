/**
 * Who may read `/metrics` (config `metrics.*`). Its series name every route, status and latency, and the
 * process's memory: an operator's view, not the public's. By default only a scraper on this machine gets it:
 * the TCP peer (the socket, never `X-Forwarded-For`) is loopback and not a proxy. A proxy on the same host
 * makes every visitor a loopback peer, so a request from a configured trusted proxy, or one carrying any
 * forwarding header, is not "this machine". `metrics.token` opens it to a bearer from anywhere (and then
 * every scrape needs it); `metrics.port` serves it on a listener of its own instead of the main port.
 */
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { MetricsSettings } from '../config/metrics.ts';
import { AppError, bilingual } from '../errors/app-error.ts';
import { errorResponse, toAppError } from './envelope.ts';
import { requestIdFrom } from '../infra/request-id.ts';

export const metricsPath = '/metrics';

export interface MetricsAccess {
  settings: MetricsSettings;
  /** Whether a socket peer is one of `server.trustedProxies`. */
  isTrustedProxy(address: string): boolean;
}

const isLoopback = proxyAddr.compile('loopback');
const forwardingHeaders = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/**
 * Why this scrape is refused, or null to serve it. On the metrics port the port itself is the boundary
 * (where `metrics.host` binds it); on the main port, without a token, only this machine.
 */
export function scrapeRefusal(request: IncomingMessage, access: MetricsAccess, onMetricsPort: boolean): AppError | null {
  const { token } = access.settings;
  if (token !== null) return bearerMatches(request.headers.authorization, token) ? null : tokenRequired();
  if (onMetricsPort || fromThisMachine(request, access)) return null;
  return new AppError(
    'not_found',
    bilingual(
      '/metrics is served only to this machine; to scrape it from elsewhere set metrics.token or metrics.port.',
      '/metrics 只对本机提供；要从别处抓取，请设置 metrics.token 或 metrics.port。',
    ),
  );
}

/** A loopback TCP peer that is not a proxy relaying someone else. */
export function fromThisMachine(request: IncomingMessage, access: MetricsAccess): boolean {
  const peer = request.socket.remoteAddress;
  if (peer === undefined || !isLoopback(peer, 0) || access.isTrustedProxy(peer)) return false;
  return forwardingHeaders.every((name) => request.headers[name] === undefined);
}

/** Compared as SHA-256 digests: constant time, whatever the length of what was sent. */
function bearerMatches(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

function tokenRequired(): AppError {
  return new AppError('sign_in_required', bilingual('GET /metrics needs Authorization: Bearer <metrics.token>.', 'GET /metrics 需要 Authorization: Bearer <metrics.token>。'), {
    headers: { 'www-authenticate': 'Bearer realm="svc-metrics"' },
  });
}

/** What a scrape reads: the registry of `metrics.ts`. */
interface ScrapedMetrics {
  registry: Registry;
}

/** `/metrics` on the main port, or on `metrics.port` (started with the app, closed with it). */
export function serveMetrics(app: FastifyInstance, metrics: ScrapedMetrics, access: MetricsAccess): void {
  const { port, host } = access.settings;
  if (port === null) {
    app.get(metricsPath, async (request, reply) => {
      const refusal = scrapeRefusal(request.raw, access, false);
      if (refusal) throw refusal;
      reply.type(metrics.registry.contentType).header('cache-control', 'no-store');
      return metrics.registry.metrics();
    });
    return;
  }
  const server = metricsServer(metrics, access, app.log);
  // onReady: a port that cannot be bound fails the start, like the main port.
  app.addHook(
    'onReady',
    () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject).listen(port, host, () => {
          server.off('error', reject).on('error', (error) => app.log.error({ err: error }, 'metrics port failed'));
          resolve();
        });
      }),
  );
  app.addHook('onClose', (_instance, done) => {
    if (!server.listening) return done();
    server.close(() => done());
    server.closeAllConnections();
  });
}

/** The metrics port: `GET /metrics` and nothing else, each refusal in the envelope. */
function metricsServer(metrics: ScrapedMetrics, access: MetricsAccess, log: FastifyBaseLogger): Server {
  const server = createServer((request, response) => {
    const started = performance.now();
    const requestId = requestIdFrom(request.headers['x-svc-request-id']);
    const fail = (error: AppError) => {
      const { status, headers, body } = errorResponse(error, requestId, performance.now() - started);
      response.writeHead(status, { ...headers, 'x-svc-request-id': requestId, 'x-request-id': requestId }).end(body);
    };
    const refusal = requestRefusal(request, response, access);
    if (refusal) return fail(refusal);
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store', 'x-request-id': requestId }).end(request.method === 'HEAD' ? undefined : text),
      (error: unknown) => {
        log.error({ err: error }, 'metrics could not be collected');
        fail(toAppError(error));
      },
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  return server;
}

function requestRefusal(request: IncomingMessage, response: ServerResponse, access: MetricsAccess): AppError | null {
  const path = (request.url ?? '/').split('?')[0];
  if (path !== metricsPath) {
    return new AppError('not_found', bilingual('This port serves only GET /metrics, not {path}.', '此端口只提供 GET /metrics，没有 {path}。', { path: JSON.stringify(path?.slice(0, 200)) }));
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('allow', 'GET, HEAD');
    return new AppError('method_not_allowed', bilingual('/metrics answers GET only.', '/metrics 只接受 GET 请求。'));
  }
  return scrapeRefusal(request, access, true);
}
