/**
 * Authentication of every transport: bearer credentials (`/v1/*`, GraphQL, the CLI) and the web session
 * cookie. This is the gateway's hot path, so it is plain SQL behind an in-process cache (token hash →
 * principal); no ORM unit of work. A revocation anywhere writes the token hash (or the account id) to an
 * outbox table that every instance polls every second — so it reaches every instance even when the revoking
 * one cannot reach Redis — and publishes it on Redis pub/sub so the others usually drop it at once. Use is recorded off the hot path (`LastUsedRecorder`).
 *
 * Token kinds are dispatched by prefix through `CredentialResolver`s: personal keys (`svc_live_`) and
 * session tokens (`svc_sess_`) are built in; the enterprise module registers one for `svc_ent_`.
 */
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { AppError } from '../../errors/app-error.ts';
import type { RedisLayer } from '../../infra/redis.ts';
import type { AccountRole } from '../account/account.entity.ts';
import type { CredentialKind, Principal } from './principal.ts';
import { sha256Hex, tokenPrefixes } from './credential-token.ts';
import type { LastUsedRecorder, TouchedTable } from './last-used.ts';

/** What a resolver finds for a token hash. */
export interface ResolvedCredential {
  principal: Principal;
  /** Absolute expiry in epoch ms, or null for credentials that live until revoked. */
  expiresAt: number | null;
  /** Idle timeout in ms (web sessions), or null. */
  idleMs: number | null;
  /** Epoch ms of the last recorded use. */
  lastUsedAt: number;
  /** Where use is recorded; null when the resolver records use itself. */
  touch: { table: TouchedTable; id: string } | null;
  /** Set when the owning account is disabled: the credential is known but must be refused. */
  disabled: boolean;
  /** Resolver-specific data kept with the cache entry (e.g. an organisation key's IP allow-list). */
  extra?: unknown;
}

/** Where a bearer request comes from: the client address (the socket peer, or X-Forwarded-For from a trusted proxy). */
export interface BearerClient {
  ip: string;
}

/** A session cookie's outcome: a principal, or signed out with the reason when there is one. */
export type WebSessionResult = { principal: Principal; refusal: null } | { principal: null; refusal: AppError | null };

export interface CredentialResolver {
  /** The token prefix this resolver owns, e.g. `svc_ent_`. */
  prefix: string;
  /** Human name for error messages, e.g. "API key". */
  label: string;
  resolve(tokenHash: string): Promise<ResolvedCredential | null>;
  /**
   * Runs on every successful authentication with this resolver's credential (cached or not), after the
   * common checks: may refuse the request by throwing (an IP allow-list) and may record the use.
   */
  admit?(found: ResolvedCredential, client: BearerClient | undefined): void;
}

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

interface CredentialRow {
  id: string;
  kind: string;
  expires_at: Date | null;
  last_used_at: Date | null;
  account_id: string;
  email: string;
  role: AccountRole;
  plan_package: string;
  disabled_at: Date | null;
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
   * CPU's caches (test/bench/RESULTS.md, fourteenth pass). Only tokens that resolved to a credential are kept,
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

  constructor(config: Config, db: Database, redis: RedisLayer, lastUsed: LastUsedRecorder) {
    this.#config = config;
    this.#db = db;
    this.#redis = redis;
    this.#lastUsed = lastUsed;
    this.registerResolver({ prefix: tokenPrefixes.personalKey, label: 'API key', resolve: (hash) => this.#resolveApiKey(hash, 'personal') });
    this.registerResolver({ prefix: tokenPrefixes.session, label: 'session token', resolve: (hash) => this.#resolveSession(hash) });
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

  /** Adds a token kind (the seam for `svc_ent_` enterprise keys). */
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
    if (!found || found.cachedUntil <= Date.now() || found.principal.credential.kind === 'web_session') return null;
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
    if (!token.startsWith(tokenPrefixes.session)) return { principal: null, refusal: null };
    const found = await this.#lookup(this.#resolvers.get(tokenPrefixes.session)!, token);
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
    if (found.expiresAt !== null && found.expiresAt <= now) throw signInRequired(`The ${label} has expired; sign in again.`);
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

  async #resolveApiKey(hash: string, kind: 'personal' | 'enterprise'): Promise<ResolvedCredential | null> {
    const row: CredentialRow | undefined = await this.#db.orm.em.getConnection().execute<CredentialRow>(
      `select k."id", k."kind", null as "expires_at", k."last_used_at",
              a."id" as "account_id", a."email", a."role", a."plan_package", a."disabled_at"
         from "api_key" k join "account" a on a."id" = k."account_id"
        where k."token_hash" = ? and k."kind" = ? and k."revoked_at" is null`,
      [hash, kind],
      'get',
    );
    return row ? toResolved(row, kind === 'personal' ? 'api_key' : 'enterprise_key', null, 'api_key') : null;
  }

  /**
   * Disabling an account revokes its sessions; while it stays disabled they still resolve (as disabled), so
   * their holders hear `account_disabled` rather than a bare "unknown or revoked".
   */
  async #resolveSession(hash: string): Promise<ResolvedCredential | null> {
    const row: CredentialRow | undefined = await this.#db.orm.em.getConnection().execute<CredentialRow>(
      `select s."id", s."kind", s."expires_at", s."last_used_at",
              a."id" as "account_id", a."email", a."role", a."plan_package", a."disabled_at"
         from "session" s join "account" a on a."id" = s."account_id"
        where s."token_hash" = ? and (s."revoked_at" is null or a."disabled_at" is not null)`,
      [hash],
      'get',
    );
    if (!row) return null;
    const web = row.kind === 'web';
    const idleMs = web ? this.#config.auth.sessionIdleDays * 86_400_000 : null;
    return toResolved(row, web ? 'web_session' : 'session_token', idleMs, 'session');
  }
}

function toResolved(row: CredentialRow, kind: CredentialKind, idleMs: number | null, table: TouchedTable): ResolvedCredential {
  return {
    principal: {
      accountId: row.account_id,
      email: row.email,
      role: row.role,
      payer: { kind: 'account', id: row.account_id, package: row.plan_package },
      credential: { kind, id: row.id },
    },
    expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null,
    idleMs,
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at).getTime() : 0,
    touch: { table, id: row.id },
    disabled: row.disabled_at !== null,
  };
}

export function signInRequired(message: string): AppError {
  return new AppError('sign_in_required', message);
}
