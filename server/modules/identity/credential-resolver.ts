/**
 * The one shape every credential takes on its way in. A `CredentialResolver` owns a token prefix, finds the
 * credential behind a token's SHA-256 (`resolve`), and may check each use (`admit`); `IdentityService` does
 * the rest for all of them alike: the Authorization header, the cache, revocation, disabled accounts,
 * expiry and idle time, last use.
 *
 * Each resolver is one file in ./resolvers/, and `services.ts` lists them once, where it builds the
 * `IdentityService`. A new kind of credential is a new file there and one line in that list.
 */
import type { TouchedTable } from './last-used.ts';
import type { BearerClient, Principal } from '../../authz/principal.ts';

export type { BearerClient } from '../../authz/principal.ts';

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

export interface CredentialResolver {
  /** The token prefix this resolver owns, e.g. `svc_ent_`. */
  readonly prefix: string;
  /** Human name for error messages, e.g. "API key". */
  readonly label: string;
  /** The live credential whose token hashes to `tokenHash`, or null. Called on cache misses only. */
  resolve(tokenHash: string): Promise<ResolvedCredential | null>;
  /**
   * Runs on every successful authentication with this resolver's credential (cached or not), after the
   * common checks: may refuse the request by throwing (an IP allow-list) and may record the use.
   */
  admit?(found: ResolvedCredential, client: BearerClient | undefined): void;
}
