/**
 * Generic OpenID Connect sign-in (when `oidc` is configured): authorization code flow with PKCE (S256),
 * `state` and `nonce`, through openid-client. The provider's verified email identifies the account; an
 * unverified email is refused, so nobody can take over an account by claiming its address at a provider.
 *
 * The in-flight checks (state, nonce, code verifier, where to return) stay on the server (Redis, or in
 * process in single-instance mode) for ten minutes under a random id; the browser only holds that id, in an
 * HttpOnly cookie scoped to the callback path. A flow is used once, so a forged, foreign or replayed cookie
 * finds nothing, and the callback's `state` must match the flow's before the provider is even asked.
 */
import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Config } from '../../config/config.ts';
import { AppError } from '../../errors/app-error.ts';
import type { RedisLayer } from '../../infra/redis.ts';
import { sameDigest, sha256Hex } from '../identity/credential-token.ts';

export const oidcCookieName = 'svc_oidc';
export const oidcCallbackPath = '/api/membership/auth/oidc/callback';
const flowTtlSeconds = 600;

export interface OidcFlow {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
}

export interface OidcIdentity {
  email: string;
  name: string | null;
  subject: string;
}

export class OidcService {
  readonly #config: Config;
  readonly #flows: FlowStore;
  #discovered: Promise<oidc.Configuration> | null = null;

  constructor(config: Config, redis: RedisLayer) {
    this.#config = config;
    this.#flows = new FlowStore(redis);
  }

  /** The sign-in button label, or null when OIDC is not configured. */
  get label(): string | null {
    return this.#config.oidc?.label ?? null;
  }

  get redirectUri(): string {
    return `${this.#config.server.webUrl}${oidcCallbackPath}`;
  }

  /** Builds the provider's authorization URL and stores the flow; `flowId` goes into the browser's cookie. */
  async begin(returnTo: unknown): Promise<{ url: URL; flowId: string; cookieMaxAge: number }> {
    const settings = this.#settings();
    const configuration = await this.#configuration();
    const flow: OidcFlow = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier: oidc.randomPKCECodeVerifier(),
      returnTo: safeReturnPath(returnTo),
    };
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: settings.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    const flowId = randomBytes(32).toString('base64url');
    await this.#flows.put(flowId, flow, flowTtlSeconds * 1000);
    return { url, flowId, cookieMaxAge: flowTtlSeconds };
  }

  /**
   * Takes the flow named by the cookie (once), checks the callback's `state` against it, exchanges the code
   * (checking nonce and PKCE) and returns the verified identity and where to send the browser.
   */
  async complete(callbackUrl: URL, flowId: string | null): Promise<OidcIdentity & { returnTo: string }> {
    this.#settings();
    const flow = flowId ? await this.#flows.take(flowId) : null;
    if (!flow) throw new AppError('invalid_request', 'The sign-in attempt expired or was started in another browser; start again.');
    const state = callbackUrl.searchParams.get('state') ?? '';
    if (!sameDigest(sha256Hex(state), sha256Hex(flow.state))) {
      throw new AppError('invalid_request', 'The sign-in answer does not belong to the attempt this browser started (state mismatch); start again.', { param: 'state' });
    }
    const configuration = await this.#configuration();
    let claims: oidc.IDToken | undefined;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
    } catch (error) {
      throw new AppError('invalid_credentials', `The identity provider did not confirm the sign-in: ${(error as Error).message}`, { cause: error });
    }
    const email = typeof claims?.email === 'string' ? claims.email : null;
    if (!claims || !email) throw new AppError('invalid_credentials', 'The identity provider did not share an email address (request the "email" scope).');
    if (claims.email_verified !== true) throw new AppError('invalid_credentials', `The identity provider has not verified ${email}; verify it there first.`);
    return { email, name: typeof claims.name === 'string' ? claims.name : null, subject: claims.sub, returnTo: flow.returnTo };
  }

  #settings(): NonNullable<Config['oidc']> {
    const settings = this.#config.oidc;
    if (!settings) throw new AppError('not_found', 'Third-party sign-in is not configured on this server.');
    return settings;
  }

  /** Discovery runs once and is cached; a failure is retried on the next sign-in. */
  #configuration(): Promise<oidc.Configuration> {
    const settings = this.#settings();
    this.#discovered ??= (async () => {
      const secret = settings.clientSecretEnv ? this.#config.secrets[settings.clientSecretEnv] : undefined;
      const issuer = new URL(settings.issuer);
      return oidc.discovery(
        issuer,
        settings.clientId,
        { redirect_uris: [this.redirectUri] },
        secret ? oidc.ClientSecretPost(secret) : oidc.None(),
        issuer.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : undefined,
      );
    })().catch((error: unknown) => {
      this.#discovered = null;
      throw new AppError('service_unavailable', `The identity provider could not be reached: ${(error as Error).message}`, { cause: error });
    });
    return this.#discovered;
  }
}

/** Only same-site paths, never `//host` or absolute URLs (no open redirect). */
export function safeReturnPath(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])[\x21-\x7e]*$/.test(value) ? value : '/account';
}

const flowIdPattern = /^[A-Za-z0-9_-]{43}$/;
const maxLocalFlows = 10_000;

/** Sign-in flows in progress, by id: in Redis when configured (any instance may get the callback), else in process. */
class FlowStore {
  readonly #redis: RedisLayer;
  readonly #local = new Map<string, { flow: OidcFlow; expiresAt: number }>();

  constructor(redis: RedisLayer) {
    this.#redis = redis;
  }

  async put(id: string, flow: OidcFlow, ttlMs: number): Promise<void> {
    const client = this.#redis.redis;
    if (client) {
      await guard(() => client.set(`oidc-flow:${id}`, JSON.stringify(flow), 'PX', ttlMs));
      return;
    }
    const now = Date.now();
    for (const [key, entry] of this.#local) if (entry.expiresAt <= now || this.#local.size >= maxLocalFlows) this.#local.delete(key);
    this.#local.set(id, { flow, expiresAt: now + ttlMs });
  }

  /** Returns and forgets the flow; null when unknown, expired or already used. */
  async take(id: string): Promise<OidcFlow | null> {
    if (!flowIdPattern.test(id)) return null;
    const client = this.#redis.redis;
    if (client) {
      const stored = await guard(() => client.getdel(`oidc-flow:${id}`));
      return stored ? (JSON.parse(stored) as OidcFlow) : null;
    }
    const entry = this.#local.get(id);
    this.#local.delete(id);
    return entry && entry.expiresAt > Date.now() ? entry.flow : null;
  }
}

async function guard<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw new AppError('service_unavailable', 'Third-party sign-in is unavailable right now (Redis did not answer); try again shortly.', { cause: error });
  }
}
