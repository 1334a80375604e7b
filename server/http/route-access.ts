/**
 * What a REST route needs of its caller, declared once in its options instead of repeated in its handler:
 *
 *   app.get('/api/membership/orders', route({ auth: 'signed-in', cache: 'no-store' }), async (request) =>
 *     services.checkout.orders(request.principal, …));
 *
 * `enforceRouteAccess(app)` gives exactly the routes that declare something one preHandler (through Fastify's
 * onRoute hook): it sets `cache-control: no-store`, then authenticates as web-session.ts does for every
 * transport — a bearer credential (a bad one is a 401), else the session cookie with the Origin check on
 * state changes — and hands the result to the handler as `request.principal` / `request.auth`. A route
 * that declares nothing runs no hook at all: the metered paths (their pipeline authenticates itself), the
 * `/v1` bearer routes, the public pages and assets.
 *
 * Which principal may do what (a web session for managing keys, staff roles) stays with the services'
 * authz checks, so a REST route and its GraphQL field refuse alike.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Principal } from '../authz/principal.ts';
import { authenticateRequest, signedIn, type RequestAuth, type SessionServices } from './web-session.ts';

/**
 * - `signed-in`: a web session cookie or a bearer API key or session token; without one, 401 (or why the
 *   cookie no longer counts: expired, account disabled).
 * - `optional`: the same credentials, and none is fine (sign-out): `request.auth.principal` may be null.
 */
export type RouteAuth = 'signed-in' | 'optional';

export interface RouteAccess {
  auth?: RouteAuth;
  /** The answer is about the caller (keys, orders, usage): no cache may keep it. */
  cache?: 'no-store';
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
    cache?: 'no-store';
  }
  interface FastifyRequest {
    /** The caller, on a route that declares `auth: 'signed-in'` (reading it on another route is a bug, and throws). */
    readonly principal: Principal;
    /** What authentication found, on a route that declares `auth` (reading it on another route throws). */
    readonly auth: RequestAuth;
  }
}

/** Route options declaring what the route needs: `app.post(path, route({ auth: 'signed-in' }), handler)`. */
export function route(access: RouteAccess): { config: RouteAccess } {
  return { config: access };
}

const resolved = new WeakMap<FastifyRequest, RequestAuth>();

/** Installs the declared-access preHandler; call it on the root instance before any route is registered. */
export function enforceRouteAccess(app: FastifyInstance, services: SessionServices): void {
  app.decorateRequest('auth', {
    getter(this: FastifyRequest) {
      const auth = resolved.get(this);
      if (!auth) throw new Error(`request.auth read on ${this.method} ${this.routeOptions.url ?? this.url}, which declares no auth`);
      return auth;
    },
  });
  app.decorateRequest('principal', {
    getter(this: FastifyRequest) {
      const auth = resolved.get(this);
      if (!auth?.principal) throw new Error(`request.principal read on ${this.method} ${this.routeOptions.url ?? this.url}, which does not declare auth: 'signed-in'`);
      return auth.principal;
    },
  });
  app.addHook('onRoute', (options: RouteOptions) => {
    const access = options.config as RouteAccess | undefined;
    if (access?.auth === undefined && access?.cache === undefined) return;
    const existing = options.preHandler === undefined ? [] : [options.preHandler].flat();
    options.preHandler = [accessHandler(access, services), ...existing];
  });
}

function accessHandler(access: RouteAccess, services: SessionServices) {
  return async function routeAccess(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (access.cache === 'no-store') reply.header('cache-control', 'no-store');
    if (access.auth === undefined) return;
    const auth = await authenticateRequest(request, services);
    if (access.auth === 'signed-in') signedIn(auth);
    resolved.set(request, auth);
  };
}
