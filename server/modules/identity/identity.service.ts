/**
 * Authentication of every transport: bearer credentials (`/v1/*`, GraphQL, the CLI) and the web session
 * cookie. This is the gateway's hot path, so it is plain SQL behind an in-process cache (token hash →
 * principal); no ORM unit of work. A revocation anywhere writes the token hash (or the account id) to an
 * outbox table that every instance polls every second — so it reaches every instance even when the revoking
 * one cannot reach Redis — and publishes it on Redis pub/sub so the others usually drop it at once. Use is recorded off the hot path (`LastUsedRecorder`).
 *
 * Token kinds are dispatched by prefix to the `CredentialResolver`s it is built with (credential-resolver.ts;
 * one file each in ./resolvers/, listed once in `services.ts`): personal keys `svc_live_`, sessions
 * `svc_sess_` (the cookie's web sessions and device login's bearer tokens), organisation keys `svc_ent_`,
 * MCP clients' OAuth access tokens `svc_mcp_` (let in only where the caller names audience `mcp`).
 */
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { RedisLayer } from '../../infra/redis.ts';
import type { BearerClient, CredentialResolver, ResolvedCredential } from './credential-resolver.ts';
import type { Principal } from '../../authz/principal.ts';
import { sha256Hex, tokenPrefixes } from './credential-token.ts';
import type { LastUsedRecorder } from './last-used.ts';

/** A session cookie's outcome: a principal, or signed out with the reason when there is one. */
export type WebSessionResult = { principal: Principal; refusal: null } | { principal: null; refusal: AppError | null };

interface CacheEntry extends ResolvedCredential {
  cachedUntil: number;
}

const invalidationChannel = 'identity:invalidate';
/** How often each instance reads the revocation outbox: the bound on how late a revocation arrives. */
const OUTBOX_POLL_MS = 1000;
const maxCacheEntries = 50_000;
const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

interface Invalidation {
  tokenHashes?: string[];
  accountId?: string;
}

export class IdentityService {
  readonly #db: Database;
  readonly #redis: RedisLayer;
  readonly #config: Config;
  readonly #lastUsed: LastUsedRecorder;
  readonly #resolvers = new Map<string, CredentialResolver>();
  readonly #cache = new Map<string, CacheEntry>();
  /**
   * The hash of each token the cache was filled for, so a cache hit does not hash again. A one-shot SHA-256
   * takes ~1 µs in a loop, but 15–45 µs at a stream's start under load, when OpenSSL's code has left the
   * CPU's caches (timed inside svc at S4's stream starts). Only tokens that resolved to a credential are kept,
   * as many as the cache holds; a token's hash never changes, so invalidation stays with the cache.
   */
  readonly #hashes = new Map<string, string>();
  readonly #listeners = new Set<() => void>();
  /** Bumped by every invalidation; a lookup that raced one does not cache its (possibly stale) result. */
  #generation = 0;
  /**
   * Whether this instance is hearing invalidations. Messages published while the subscriber connection is
   * away are lost, so until it is back (and subscribed again) the cache is neither read nor filled.
   */
  #listening: boolean;
  readonly #unsubscribe: () => void;
  #detach: () => void = () => undefined;
  /** The last outbox row applied (null until the first poll read where the outbox stands). */
  #outboxSeen: string | null = null;
  #pollTimer: NodeJS.Timeout | null = null;

  constructor(config: Config, db: Database, redis: RedisLayer, lastUsed: LastUsedRecorder, resolvers: readonly CredentialResolver[]) {
    this.#config = config;
    this.#db = db;
    this.#redis = redis;
    this.#lastUsed = lastUsed;
    for (const resolver of resolvers) this.registerResolver(resolver);
    this.#unsubscribe = redis.pubsub.subscribe(invalidationChannel, (message) => this.#apply(JSON.parse(message) as Invalidation));
    const subscriber = redis.subscriber;
    this.#listening = subscriber === null;
    if (subscriber) {
      const deaf = () => {
        this.#listening = false;
        this.#dropAll();
      };
      // ioredis sends the re-SUBSCRIBE right after 'ready'; a PING queued behind it answers once it is active.
      const hearing = () =>
        setImmediate(() => {
          subscriber.ping().then(
            () => {
              if (subscriber.status !== 'ready') return;
              this.#dropAll();
              this.#listening = true;
            },
            () => undefined,
          );
        });
      subscriber.on('close', deaf);
      subscriber.on('ready', hearing);
      if (subscriber.status === 'ready') hearing();
      this.#detach = () => {
        subscriber.off('close', deaf);
        subscriber.off('ready', hearing);
      };
    }
  }

  /** Whether revocations published by other instances reach this one (so its cache is in use). */
  get hearingInvalidations(): boolean {
    return this.#listening;
  }

  /** Adds a token kind, or replaces the one for its prefix (tests stand a stub in this way). */
  registerResolver(resolver: CredentialResolver): void {
    this.#resolvers.set(resolver.prefix, resolver);
  }

  /**
   * Resolves an `Authorization` header to a principal, or throws 401 `sign_in_required` (or
   * `account_disabled`) with a message saying what is wrong. Accepts device-login session tokens and API keys; web session tokens only
   * work as the cookie.
   */
  async authenticateBearer(authorization: string | undefined, client?: BearerClient): Promise<Principal> {
    if (authorization === undefined || authorization.trim() === '') {
      throw signInRequired('Sign in required: send "Authorization: Bearer <API key or session token>".');
    }
    const match = BEARER.exec(authorization);
    if (!match) throw signInRequired('The Authorization header must be "Bearer <token>" with exactly one token.');
    const token = match[1]!;
    const resolver = this.#resolverFor(token);
    if (!resolver) {
      throw signInRequired('The bearer token is not an svc credential: expected an API key (svc_live_…, svc_ent_…) or a session token (svc_sess_…).');
    }
    const found = await this.#lookup(resolver, token);
    if (!found || found.principal.credential.kind === 'web_session') {
      throw signInRequired(`The ${resolver.label} is not valid: it is unknown or has been revoked.`);
    }
    if (!admitsAudience(found, client)) {
      throw signInRequired('This token was issued to an MCP client by OAuth and works only on /v1/mcp; use an API key (svc_live_…) or a session token here.');
    }
    return this.#letIn(found, resolver, client);
  }

  /**
   * `authenticateBearer` for a credential in the cache, answered at once (the chat path's common case):
   * the principal, or null when the full path has to look (or to say what is wrong with the header).
   */
  authenticateCached(authorization: string | undefined, client?: BearerClient): Principal | null {
    if (authorization === undefined || !this.#listening) return null;
    const token = BEARER.exec(authorization)?.[1];
    const resolver = token === undefined ? undefined : this.#resolverFor(token);
    if (!resolver) return null;
    const hash = this.#hashes.get(token!);
    const found = hash === undefined ? undefined : this.#cache.get(hash);
    if (!found || found.cachedUntil <= Date.now() || found.principal.credential.kind === 'web_session' || !admitsAudience(found, client)) return null;
    return this.#letIn(found, resolver, client);
  }

  /** The checks after a credential is found: disabled, expired or idle (throws), the resolver's own (addresses), then use. */
  #letIn(found: ResolvedCredential, resolver: CredentialResolver, client: BearerClient | undefined): Principal {
    this.#check(found, resolver.label);
    resolver.admit?.(found, client);
    // Use is recorded only once the call is let in (a refused address is not "use").
    this.#used(found, Date.now());
    return found.principal;
  }

  /**
   * Resolves the web session cookie value. A cookie that does not count leaves the browser signed out:
   * `principal` is null, and `refusal` says why when there is something to say (the account is disabled,
   * the session expired) — transports throw it where the request needs sign-in.
   */
  async authenticateWebSession(token: string): Promise<WebSessionResult> {
    const sessions = this.#resolvers.get(tokenPrefixes.session);
    if (!sessions || !token.startsWith(tokenPrefixes.session)) return { principal: null, refusal: null };
    const found = await this.#lookup(sessions, token);
    if (!found || found.principal.credential.kind !== 'web_session') return { principal: null, refusal: null };
    try {
      this.#check(found, 'web session');
    } catch (error) {
      return { principal: null, refusal: error as AppError };
    }
    this.#used(found, Date.now());
    return { principal: found.principal, refusal: null };
  }

  /**
   * Drops credentials from every instance's cache (call after the database change is committed): here at
   * once, on the others within a second through the outbox (or at once through Redis pub/sub). If the outbox
   * cannot be written the caller gets a 503 — never "done in the database, not in the caches" silently.
   */
  async invalidate(what: Invalidation): Promise<void> {
    this.#apply(what);
    if (this.#redis.mode === 'in-process') return this.#redis.pubsub.publish(invalidationChannel, JSON.stringify(what));
    try {
      await this.#db.query(`insert into credential_invalidation (token_hashes, account_id) values ($1::jsonb, $2)`, [JSON.stringify(what.tokenHashes ?? []), what.accountId ?? null]);
    } catch (error) {
      throw new AppError('service_unavailable', 'The change was saved, but other servers could not be told yet; they will stop accepting the credential within a minute. Retry to be sure.', { cause: error });
    }
    // The fast path; the outbox is the guarantee.
    await this.#redis.pubsub.publish(invalidationChannel, JSON.stringify(what)).catch(() => undefined);
  }

  /** Starts polling the outbox (multi-instance mode): revocations from instances that could not publish. */
  start(): void {
    if (this.#redis.mode === 'in-process') return;
    const poll = async () => {
      const connection = this.#db.orm.em.getConnection();
      if (this.#outboxSeen === null) {
        const [row] = await connection.execute<{ last: string | null }[]>(`select max(id)::text as last from credential_invalidation`, [], 'all');
        this.#outboxSeen = row?.last ?? '0';
        return;
      }
      const rows = await connection.execute<{ id: string; token_hashes: string[] | string; account_id: string | null }[]>(
        `select id::text as id, token_hashes, account_id from credential_invalidation where id > ? order by id limit 1000`,
        [this.#outboxSeen],
        'all',
      );
      for (const row of rows) {
        const hashes = typeof row.token_hashes === 'string' ? (JSON.parse(row.token_hashes) as string[]) : row.token_hashes;
        this.#apply({ tokenHashes: hashes, accountId: row.account_id ?? undefined });
        this.#outboxSeen = row.id;
      }
      // Rows outlive any cache entry they could concern; any instance may prune.
      if (Math.random() < 0.01) await connection.execute(`delete from credential_invalidation where created_at < now() - interval '2 hours'`, [], 'run');
    };
    const tick = () => {
      poll().then(
        () => (this.#pollTimer = setTimeout(tick, OUTBOX_POLL_MS).unref()),
        () => (this.#pollTimer = setTimeout(tick, OUTBOX_POLL_MS).unref()),
      );
    };
    tick();
  }

  /**
   * Calls `listener` after every invalidation, from this instance or another: connections that stay open
   * (graphql-ws) check their credential again, so a revoked or disabled one stops there too. Returns the
   * unsubscribe function.
   */
  onInvalidate(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Drops every cached credential of an account (role, plan or disabled state changed). */
  invalidateAccount(accountId: string): Promise<void> {
    return this.invalidate({ accountId });
  }

  close(): void {
    if (this.#pollTimer) clearTimeout(this.#pollTimer);
    this.#pollTimer = null;
    this.#unsubscribe();
    this.#detach();
  }

  #resolverFor(token: string): CredentialResolver | undefined {
    for (const [prefix, resolver] of this.#resolvers) if (token.startsWith(prefix) && token.length > prefix.length) return resolver;
    return undefined;
  }

  async #lookup(resolver: CredentialResolver, token: string): Promise<ResolvedCredential | null> {
    const hash = this.#hashes.get(token) ?? sha256Hex(token);
    const now = Date.now();
    const cached = this.#listening ? this.#cache.get(hash) : undefined;
    if (cached && cached.cachedUntil > now) return cached;
    const generation = this.#generation;
    let found: ResolvedCredential | null;
    try {
      found = await resolver.resolve(hash);
    } catch (error) {
      throw new AppError('service_unavailable', 'Cannot check the credential right now (the database did not answer); try again shortly.', { cause: error });
    }
    if (!found) return null;
    const ttl = this.#config.auth.credentialCacheSeconds * 1000;
    if (ttl > 0 && this.#listening && generation === this.#generation) {
      if (this.#cache.size >= maxCacheEntries) this.#cache.delete(this.#cache.keys().next().value!);
      if (this.#hashes.size >= maxCacheEntries) this.#hashes.delete(this.#hashes.keys().next().value!);
      this.#cache.set(hash, { ...found, cachedUntil: now + ttl });
      this.#hashes.set(token, hash);
    }
    return this.#cache.get(hash) ?? found;
  }

  /** Checks expiry and idle time before recording use, so an expired credential is not "used". */
  #used(entry: ResolvedCredential, now: number): ResolvedCredential {
    if (entry.disabled || (entry.expiresAt !== null && entry.expiresAt <= now) || (entry.idleMs !== null && entry.lastUsedAt + entry.idleMs <= now)) {
      return entry;
    }
    if (entry.touch) this.#lastUsed.touch(entry.touch.table, entry.touch.id, new Date(now));
    entry.lastUsedAt = now;
    return entry;
  }

  #check(found: ResolvedCredential, label: string): void {
    const now = Date.now();
    if (found.disabled) throw new AppError('account_disabled', `This account is disabled: its ${label} is refused until staff enable it again.`);
    if (found.expiresAt !== null && found.expiresAt <= now) {
      const kind = found.principal.credential.kind;
      if (kind === 'api_key' || kind === 'enterprise_key') {
        // A key its owner gave an end date: say which limit refused it, not "sign in".
        const at = new Date(found.expiresAt).toISOString();
        throw new AppError(
          'key_expired',
          bilingual('This {label} expired at {at} (its expiry date). Create a new key, or ask its owner to extend the expiry.', '该{label}已于 {at} 过期（到达其设定的有效期）。请创建新密钥，或请密钥所有者延长有效期。', {
            label: { en: label, zh: kind === 'api_key' ? ' API 密钥' : '组织密钥' },
            at,
          }),
          { details: { keyLimit: 'expires_at', expiresAt: at } },
        );
      }
      throw signInRequired(`The ${label} has expired; sign in again.`);
    }
    if (found.idleMs !== null && found.lastUsedAt + found.idleMs < now) throw signInRequired(`The ${label} expired after a period without use; sign in again.`);
  }

  #dropAll(): void {
    this.#generation += 1;
    this.#cache.clear();
    this.#hashes.clear();
  }

  #apply(what: Invalidation): void {
    this.#generation += 1;
    for (const hash of what.tokenHashes ?? []) this.#cache.delete(hash);
    if (what.accountId) {
      // The account's own credentials, and those that bill it (an organisation's keys).
      for (const [hash, entry] of this.#cache) if (entry.principal.accountId === what.accountId || entry.principal.payer.id === what.accountId) this.#cache.delete(hash);
    }
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch {
        // A listener's failure is its own; the cache is already right.
      }
    }
  }
}

export function signInRequired(message: string): AppError {
  return new AppError('sign_in_required', message);
}

/** Audience-limited credentials (MCP access tokens) pass only where the caller asked for their audience. */
function admitsAudience(found: ResolvedCredential, client: BearerClient | undefined): boolean {
  return found.principal.credential.kind !== 'mcp_token' || client?.audience === 'mcp';
}
