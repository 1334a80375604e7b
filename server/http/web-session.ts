/**
 * The HTTP side of authentication, shared by the REST routes and GraphQL: reading the credential of a
 * request (bearer first — bearer requests ignore cookies), the `svc_membership_session` cookie
 * (HttpOnly, SameSite=Lax, Path=/, Secure behind https, no Domain) and the Origin/Referer check that
 * cookie-authenticated state changes must pass (403 `forbidden`, stage `auth`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Config } from '../config/config.ts';
import { AppError, bilingual } from '../errors/app-error.ts';
import type { BearerClient, Principal } from '../authz/principal.ts';
import type { ClientInfo } from './client-info.ts';
import { requestLocale } from '../i18n/locale.ts';

export const sessionCookieName = 'svc_membership_session';

export interface RequestAuth {
  principal: Principal | null;
  /** How the principal was established. */
  via: 'bearer' | 'cookie' | null;
  /**
   * Why the session cookie that came with the request does not count (its account is disabled, it expired),
   * or null. The request goes on signed out; `signedIn` throws this where sign-in is needed.
   */
  refusal: AppError | null;
}

/**
 * What the cookie and bearer checks ask of the services: the identity and session modules answer it
 * (`services.ts`'s `Services` is one), so this layer imports nothing above it.
 */
export interface SessionServices {
  config: Config;
  identity: {
    authenticateBearer(authorization: string | undefined, client?: BearerClient): Promise<Principal>;
    authenticateWebSession(token: string): Promise<{ principal: Principal | null; refusal: AppError | null }>;
  };
  sessions: {
    startWebSession(accountId: string, client: ClientInfo, previousToken?: string | null): Promise<{ token: string; session: { expiresAt: Date } }>;
    revokeByToken(token: string): Promise<void>;
    endBearerSession(principal: Principal): Promise<void>;
  };
}

/** Lets a transport start or end the browser's web session (sign-in and sign-out set the cookie). */
export interface WebSessionControl {
  client: ClientInfo;
  start(accountId: string): Promise<void>;
  end(): Promise<void>;
}

export function clientInfo(request: FastifyRequest): ClientInfo {
  const userAgent = request.headers['user-agent'];
  return { ip: request.ip, userAgent: typeof userAgent === 'string' ? userAgent : null, locale: requestLocale(request.headers) };
}

/** Reads one cookie from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index < 0) continue;
    if (part.slice(0, index).trim() === name) {
      const value = part.slice(index + 1).trim();
      return value.length > 0 ? value : null;
    }
  }
  return null;
}

/**
 * The credential of a request: `Authorization: Bearer …` (a bad one throws 401) or else the session
 * cookie (a stale cookie just means "not signed in"). A cookie-authenticated request that changes state
 * must come from one of our own origins.
 */
export async function authenticateRequest(request: FastifyRequest, services: SessionServices): Promise<RequestAuth> {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    return { principal: await services.identity.authenticateBearer(authorization, { ip: request.ip }), via: 'bearer', refusal: null };
  }
  const token = readCookie(request.headers.cookie, sessionCookieName);
  if (!token) return signedOut;
  const { principal, refusal } = await services.identity.authenticateWebSession(token);
  if (!principal) return { principal: null, via: null, refusal };
  if (changesState(request.method)) assertSameOrigin(request, services.config);
  return { principal, via: 'cookie', refusal: null };
}

const signedOut: RequestAuth = { principal: null, via: null, refusal: null };

/**
 * The principal of a request that needs someone signed in, or the 401 saying why there is none. What the
 * principal may do (a web session, a role) is for the service's authz check to say.
 */
export function signedIn(auth: RequestAuth): Principal {
  if (auth.principal) return auth.principal;
  throw auth.refusal ?? new AppError('sign_in_required', 'Sign in required: no valid web session or bearer credential (sign in at /account).');
}

/**
 * `/graphql` over HTTP. The cookie counts only on POST: a GET can be a cross-site top-level navigation,
 * which SameSite=Lax sends the cookie with, and a query may still change state (opening a device code claims
 * it). A POST without a bearer may sign in, so another site's Origin is refused, as on the REST sign-in routes.
 */
export async function authenticateGraphQLRequest(request: FastifyRequest, services: SessionServices): Promise<RequestAuth> {
  if (request.headers.authorization !== undefined) return authenticateRequest(request, services);
  if (request.method !== 'POST') return signedOut;
  assertSameOrigin(request, services.config, { required: false });
  return authenticateRequest(request, services);
}

/** A control that sets and clears the cookie on this reply. */
export function webSessionControl(request: FastifyRequest, reply: FastifyReply, services: SessionServices): WebSessionControl {
  const client = clientInfo(request);
  return {
    client,
    start: async (accountId) => {
      const previous = readCookie(request.headers.cookie, sessionCookieName);
      const { token, session } = await services.sessions.startWebSession(accountId, client, previous);
      reply.header('set-cookie', sessionCookie(token, session.expiresAt, isSecure(request, services.config)));
    },
    end: async () => {
      const token = readCookie(request.headers.cookie, sessionCookieName);
      if (token) await services.sessions.revokeByToken(token);
      reply.header('set-cookie', sessionCookie('', new Date(0), isSecure(request, services.config)));
    },
  };
}

/**
 * Sign-out for REST and GraphQL alike. A bearer caller ends its own device-login token and its cookie is
 * left alone (bearer requests ignore cookies); otherwise the browser's web session is revoked and cleared.
 */
export async function signOut(principal: Principal | null, web: WebSessionControl, services: SessionServices): Promise<void> {
  if (principal && principal.credential.kind !== 'web_session') return services.sessions.endBearerSession(principal);
  await web.end();
}

export function sessionCookie(token: string, expiresAt: Date, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return [`${sessionCookieName}=${token}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${maxAge}`, `Expires=${expiresAt.toUTCString()}`, ...(secure ? ['Secure'] : [])].join('; ');
}

/** Secure when the browser talks https to us: directly, through a trusted proxy, or per the configured web URL. */
export function isSecure(request: FastifyRequest, config: Config): boolean {
  return request.protocol === 'https' || config.server.webUrl.startsWith('https:');
}

function changesState(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}

/**
 * Origin (or, without it, Referer) must be our base URL, web URL, one of `server.corsOrigins` or the host
 * the request was sent to.
 * `required: false` only rejects a mismatch (sign-in forms, against login CSRF).
 */
export function assertSameOrigin(request: FastifyRequest, config: Config, options: { required?: boolean } = {}): void {
  const source = originOf(request.raw);
  if (source === null) {
    if (options.required === false) return;
    const message = bilingual(
      'Cookie-authenticated requests that change state must send an Origin or Referer header of this site.',
      '使用 Cookie 认证且会修改状态的请求，必须带有本站的 Origin 或 Referer 请求头。',
    );
    throw new AppError('forbidden', message, { stage: 'auth' });
  }
  if (!allowedOrigins(config, `${request.protocol}://${request.host}`).has(source)) {
    throw new AppError('forbidden', bilingual('Cross-site request refused: origin {origin} is not this site.', '已拒绝跨站请求：来源 {origin} 不是本站。', { origin: source }), { stage: 'auth' });
  }
}

/** The same check on a raw upgrade request (graphql-ws), where only Origin applies. */
export function sameOriginUpgrade(request: IncomingMessage, config: Config): boolean {
  const source = originOf(request);
  const host = request.headers.host;
  if (source === null || !host) return false;
  const scheme = source.startsWith('https:') ? 'https' : 'http';
  return allowedOrigins(config, `${scheme}://${host}`).has(source);
}

function originOf(request: IncomingMessage): string | null {
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== 'null' && origin.length > 0) return origin.toLowerCase();
  const referer = request.headers.referer;
  if (typeof referer === 'string') {
    try {
      return new URL(referer).origin.toLowerCase();
    } catch {
      return null;
    }
  }
  return null;
}

function allowedOrigins(config: Config, own: string): Set<string> {
  return new Set([own.toLowerCase(), ...webOrigins(config)]);
}

/**
 * The origins of this service's own web app, lower-cased: the base URL's, the web URL's and
 * `server.corsOrigins`. Only they may use the member's cookie — the Origin check here, credentialed CORS on
 * `/graphql` (http/cors.ts).
 */
export function webOrigins(config: Config): string[] {
  return [config.server.baseUrl, config.server.webUrl, ...config.server.corsOrigins].map((url) => new URL(url).origin.toLowerCase());
}
