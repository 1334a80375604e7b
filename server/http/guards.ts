/**
 * What keeps one client from taking the server down (issue 15): a cap on open connections in total and
 * per address (so ~20k trickling sockets cannot exhaust file descriptors and starve the upstream calls),
 * the per-IP request limit on every route, and the error envelope for what Node itself refuses before any
 * route runs (malformed requests, header overflow, timeouts) and for upgrade requests on other paths.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.ts';
import type { ErrorCode } from '../errors/codes.ts';
import type { RateLimiter } from '../rate-limit/rate-limit.service.ts';
import { envelopeFor } from './envelope.ts';
import { newRequestId } from '../infra/request-id.ts';

export interface ConnectionLimits {
  maxConnections: number;
  maxConnectionsPerIp: number;
  /** Peers that carry many clients' connections (configured trusted proxies): the per-address cap skips them. */
  isTrustedProxy(address: string): boolean;
}

/** Answers a raw socket with the envelope and closes it (no Fastify request exists yet). */
export function refuseSocket(socket: Socket, status: number, code: ErrorCode, message: string, extraHeaders = ''): void {
  if (socket.destroyed || socket.writableEnded) return;
  const requestId = newRequestId();
  const body = JSON.stringify(envelopeFor(new AppError(code, message), requestId, 0));
  const reason = { 400: 'Bad Request', 404: 'Not Found', 408: 'Request Timeout', 431: 'Request Header Fields Too Large', 503: 'Service Unavailable' }[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-svc-request-id: ${requestId}\r\nx-request-id: ${requestId}\r\nx-svc-error-code: ${code}\r\nconnection: close\r\n${extraHeaders}\r\n${body}`,
  );
  // A peer that will not read is not waited for.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** File descriptors kept free for upstream sockets, the database, Redis and files, whatever clients do. */
const FD_RESERVE = 1024;

/** The process's soft limit on open files (Linux: /proc/self/limits), or null where it cannot be read. */
export function openFileLimit(): number | null {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Counts open connections; over a cap, a new one gets a 503 envelope and is closed at once. The total cap
 * is lowered to leave `FD_RESERVE` descriptors free when the process's open-file limit is lower than it.
 */
export function guardConnections(app: FastifyInstance, limits: ConnectionLimits): { open(): number; max: number } {
  const fds = openFileLimit();
  const max = fds === null ? limits.maxConnections : Math.max(64, Math.min(limits.maxConnections, fds - FD_RESERVE));
  if (max < limits.maxConnections) app.log.warn({ openFileLimit: fds, maxConnections: max }, 'the open-file limit is low: fewer client connections allowed (raise it with ulimit -n)');
  let open = 0;
  const perIp = new Map<string, number>();
  app.server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? 'unknown';
    const mine = perIp.get(ip) ?? 0;
    if (open >= max || (mine >= limits.maxConnectionsPerIp && !limits.isTrustedProxy(ip))) {
      refuseSocket(socket, 503, 'service_unavailable', open >= max ? 'The server has too many open connections; retry shortly.' : 'Too many open connections from your address; close some and retry.', 'retry-after: 1\r\n');
      return;
    }
    open += 1;
    perIp.set(ip, mine + 1);
    socket.once('close', () => {
      open -= 1;
      const left = (perIp.get(ip) ?? 1) - 1;
      if (left <= 0) perIp.delete(ip);
      else perIp.set(ip, left);
    });
  });
  return { open: () => open, max };
}

/** Fastify's `clientErrorHandler`: Node's own 400/408/431 answers, in the envelope. */
export function clientErrorEnvelope(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') return refuseSocket(socket, 431, 'headers_too_large', 'The request headers are too large.');
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return refuseSocket(socket, 408, 'request_timeout', 'The request was not received in time.');
  refuseSocket(socket, 400, 'invalid_request', 'The HTTP request is malformed.');
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false`: the route counts against the per-IP limit elsewhere (the metering pipeline's admission). */
    ipLimit?: false;
  }
}

/**
 * The per-IP request limit (`rateLimits.ipPerMinute`) on every route. Metered routes mark themselves
 * `config: { ipLimit: false }`: their admission charges the same `ip:` bucket in its one atomic step.
 * Pages and static assets stay up when Redis is away; API routes fail closed (503), like admission.
 */
export function limitEveryRoute(app: FastifyInstance, limiter: RateLimiter, ipPerMinute: number): void {
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.routeOptions.config?.ipLimit === false) return;
    const url = request.routeOptions.url ?? '';
    if (url === '/healthz' || url === '/readyz' || url === '/metrics' || url.startsWith('/assets/')) return;
    const api = /^\/(v1|api|graphql|oauth|\.well-known)(\/|$)/.test(request.url);
    try {
      await limiter.assert([{ key: `ip:${request.ip}`, limit: ipPerMinute, periodMs: 60_000 }], 'requests from your address');
    } catch (error) {
      if (api || (error as AppError).code === 'rate_limited') throw error;
      request.log.warn({ err: error }, 'per-IP limit unavailable; page served anyway');
    }
  });
}
