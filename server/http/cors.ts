/**
 * CORS. `/v1`: a web app on another origin may call the API with a bearer key in `Authorization`.
 * `/v1` never reads cookies, so no `access-control-allow-credentials` is ever sent: a browser cannot be
 * made to spend its user's session there. Origins come from `gateway.cors.origins` (`*` by default).
 *
 * Cheap on the hot path: a request without `Origin` (every SDK outside a browser) costs one header
 * lookup; one with it, two `setHeader` calls on the raw response, so the headers survive a streamed reply
 * that writes its own head. A preflight is answered by its own route, never by the pipeline.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CORSOptions } from 'graphql-yoga';
import type { ServerResponse } from 'node:http';
import type { Config } from '../config/config.ts';
import { webOrigins } from './web-session.ts';

/** What a browser script may read of our replies: request ids, error code and stage, retry and rate-limit advice. */
const exposedHeaders = [
  'x-request-id',
  'x-svc-request-id',
  'x-svc-error-code',
  'x-svc-error-stage',
  'x-should-retry',
  'retry-after',
  'server-timing',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
  // The Anthropic Messages API's: its request id, and what svc changed or ignored in a request.
  'request-id',
  'x-svc-thinking',
  'x-svc-max-tokens',
  'x-svc-ignored',
].join(', ');

/** Request headers a preflight may ask for: header names only (RFC 9110 tokens), comma-separated. */
const HEADER_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

export class Cors {
  readonly #any: boolean;
  readonly #origins: ReadonlySet<string>;
  readonly #maxAge: string;

  constructor(config: Config['gateway']['cors']) {
    this.#any = config.origins.includes('*');
    this.#origins = new Set(config.origins);
    this.#maxAge = String(config.maxAgeSeconds);
  }

  /** The `access-control-allow-origin` value for a request from `origin`, or null when it is not allowed. */
  allowOrigin(origin: string): string | null {
    if (this.#any) return '*';
    return this.#origins.has(origin) ? origin : null;
  }

  /** Marks the reply to a cross-origin `/v1` request as readable by that origin. */
  apply(raw: ServerResponse, origin: string): void {
    const allowed = this.allowOrigin(origin);
    // A reply that depends on Origin must say so, or a shared cache could hand it to another origin.
    if (!this.#any) raw.setHeader('vary', 'origin');
    if (allowed === null) return;
    raw.setHeader('access-control-allow-origin', allowed);
    raw.setHeader('access-control-expose-headers', exposedHeaders);
  }

  /** `OPTIONS /v1/*`: the preflight answer (204). What the browser then enforces is its business. */
  preflight(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const origin = request.headers.origin;
    reply.code(204).header('allow', 'GET, POST, OPTIONS');
    if (typeof origin !== 'string' || this.allowOrigin(origin) === null) return reply.send();
    const asked = request.headers['access-control-request-headers'];
    reply
      .header('access-control-allow-methods', 'GET, POST, OPTIONS')
      .header('access-control-allow-headers', typeof asked === 'string' && HEADER_LIST.test(asked) ? asked : 'authorization, content-type')
      .header('access-control-max-age', this.#maxAge);
    return reply.send();
  }
}

/** The CORS policy for `/v1`, or null when `gateway.cors.origins` is empty (CORS off). */
export function corsFor(config: Config): Cors | null {
  return config.gateway.cors.origins.length > 0 ? new Cors(config.gateway.cors) : null;
}

export function corsRoutes(app: FastifyInstance, cors: Cors | null): void {
  if (cors) app.options('/v1/*', (request, reply) => cors.preflight(request, reply));
}

/**
 * CORS for `/graphql`, which accepts the member's cookie: credentialed, and only for the web app's own
 * origins (`webOrigins`: base URL, web URL, `server.corsOrigins`). Any other origin — `null` from a
 * sandboxed frame included — gets no CORS header at all, so its browser keeps every answer from it.
 * (Yoga's default reflects whatever Origin is sent, with credentials.)
 */
export function graphqlCors(config: Config): (request: Request) => CORSOptions {
  const allowed = new Set(webOrigins(config));
  return (request) => {
    const origin = request.headers.get('origin');
    if (origin === null || !allowed.has(origin.toLowerCase())) return false;
    return { origin: [origin], credentials: true, methods: ['GET', 'POST'], exposedHeaders: ['x-request-id', 'x-svc-request-id', 'x-svc-error-code', 'x-svc-error-stage'], maxAge: 7200 };
  };
}
