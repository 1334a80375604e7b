/**
 * OAuth authorization for MCP clients (RFC 6749 authorization code with PKCE, MCP authorization spec
 * 2025-06-18 and 2025-11-25), the part a person takes part in:
 *
 *   GET /oauth/authorize → `authorize()` checks the client, its redirect URI, PKCE and the resource, keeps
 *   the request (10 minutes) and sends the browser to the consent page (`/oauth/consent?request=…`). The
 *   member, signed in there with a web session, sees the client's name, where it sends them back and the
 *   scope, and clicks Approve or Deny (`decide()`). Approval puts a one-time code (256 bits, 60 s, bound to
 *   the client, redirect URI, PKCE challenge and resource) on the request and sends the browser back to
 *   the client; the code is exchanged in `oauth-token.service.ts`.
 *
 * Until the client and its redirect URI are known good, errors are shown on the consent page and never sent
 * to the redirect URI (RFC 6749 §4.1.2.1); after that they go back to the client as `error=…`. The grants
 * a member approved are listed with their sessions (kind `mcp`) and revoked like them.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { entityManager } from '../../db/unit-of-work.ts';
import { isUuid } from '../../db/ids.ts';
import * as authz from '../../authz/authz.ts';
import { sha256Hex } from '../identity/credential-token.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { Principal } from '../../authz/principal.ts';
import type { SessionView } from '../session/session.service.ts';
import { matchRedirectUri, mcpScope, type OAuthClients } from './oauth-client.ts';
import { OAuthAuthorization, type IOAuthAuthorization } from './oauth.entity.ts';
import { isCodeChallenge } from './pkce.ts';
import { acceptedResource, revokeGrant, type OAuthResources } from './oauth-grant.ts';

/** How long the consent page may take to decide on a request. */
const requestTtlMs = 10 * 60_000;
/** How long an approval's one-time code can be exchanged. */
export const codeTtlMs = 60_000;

export type ConsentState = 'pending' | 'approved' | 'denied' | 'expired';

/** What the consent page shows. */
export interface ConsentView {
  id: string;
  clientName: string;
  clientUri: string | null;
  redirectUri: string;
  /** Where the browser goes back to: the redirect URI's host (and port), or its scheme for app schemes. */
  redirectHost: string;
  scope: string;
  resource: string | null;
  state: ConsentState;
  expiresAt: Date;
}

export interface ConsentDecision {
  request: ConsentView;
  /** Where the browser goes next: the client's redirect URI with `code` (or `error=access_denied`), `state` and `iss`. */
  redirectTo: string;
}

/** Why the consent page, not the client, hears about a bad authorization request. */
export type ConsentPageError = 'unknown_client' | 'invalid_redirect_uri';

export class OAuthAuthorizations {
  readonly #config: Config;
  readonly #db: Database;
  readonly #clients: OAuthClients;
  readonly #identity: IdentityService;
  readonly #resources: OAuthResources;

  constructor(config: Config, db: Database, deps: { clients: OAuthClients; identity: IdentityService; resources: OAuthResources }) {
    this.#config = config;
    this.#db = db;
    this.#clients = deps.clients;
    this.#identity = deps.identity;
    this.#resources = deps.resources;
  }

  /** `GET /oauth/authorize`: where to send the browser (the consent page, or the client with an error). */
  async authorize(query: Record<string, unknown>): Promise<string> {
    const client = await this.#clients.find(query.client_id);
    if (!client) return this.#consentPage({ error: 'unknown_client' satisfies ConsentPageError });
    const redirectUri = matchRedirectUri(client.redirectUris, typeof query.redirect_uri === 'string' ? query.redirect_uri : undefined);
    if (!redirectUri || (query.redirect_uri !== undefined && typeof query.redirect_uri !== 'string')) {
      return this.#consentPage({ error: 'invalid_redirect_uri' satisfies ConsentPageError });
    }
    const state = query.state;
    const back = (error: string, description: string) =>
      withParams(redirectUri, { error, error_description: description, ...(typeof state === 'string' ? { state } : {}), iss: this.#config.server.baseUrl });
    if (state !== undefined && (typeof state !== 'string' || state.length > 1000 || /\p{Cc}/u.test(state))) {
      return back('invalid_request', 'state must be one string of at most 1000 printable characters.');
    }
    if (query.response_type !== 'code') return back('unsupported_response_type', 'response_type must be code.');
    if (!isCodeChallenge(query.code_challenge)) return back('invalid_request', 'code_challenge is required: PKCE with S256 (43 characters of base64url).');
    if (query.code_challenge_method !== 'S256') return back('invalid_request', 'code_challenge_method must be S256.');
    const resource = query.resource === undefined ? null : acceptedResource(this.#resources, query.resource);
    if (resource === undefined) return back('invalid_target', `resource must be ${this.#resources[0]} (svc's MCP server).`);
    if (query.scope !== undefined && typeof query.scope !== 'string') return back('invalid_scope', 'scope must be one space-separated string.');

    const em = entityManager(this.#db);
    const row = em.create(OAuthAuthorization, {
      clientId: client.id,
      redirectUri,
      clientState: typeof state === 'string' ? state : null,
      // Only `mcp` can be granted; other scopes asked for are left out, and the token response says so.
      scope: mcpScope,
      resource,
      codeChallenge: query.code_challenge,
      status: 'pending',
      expiresAt: new Date(Date.now() + requestTtlMs),
      accountId: null,
      decidedSessionId: null,
      decidedAt: null,
      codeHash: null,
      codeExpiresAt: null,
      ip: null,
      userAgent: null,
      lastUsedAt: null,
      revokedAt: null,
    });
    await em.flush();
    if (Math.random() < 0.01) void this.#pruneAbandoned().catch(() => undefined);
    return this.#consentPage({ request: row.id });
  }

  /** The consent page opens a request: who asks, for what, and where the browser goes back to. */
  async open(principal: authz.Actor, id: string): Promise<ConsentView> {
    authz.assert(principal, 'oauth:approve');
    return this.#view(await this.#find(principal, id));
  }

  /** Approve or deny, on an explicit click on the consent page. Approval mints the one-time code. */
  async decide(principal: authz.Actor, id: string, decision: 'approve' | 'deny'): Promise<ConsentDecision> {
    authz.assert(principal, 'oauth:approve');
    const row = await this.#find(principal, id);
    const code = decision === 'approve' ? randomBytes(32).toString('base64url') : null;
    const now = new Date();
    const em = entityManager(this.#db);
    const updated = await em.nativeUpdate(
      OAuthAuthorization,
      { id: row.id, status: 'pending', expiresAt: { $gt: now } },
      {
        status: code ? 'approved' : 'denied',
        accountId: principal.accountId,
        decidedSessionId: principal.credential.id,
        decidedAt: now,
        codeHash: code ? sha256Hex(code) : null,
        codeExpiresAt: code ? new Date(now.getTime() + codeTtlMs) : null,
      },
    );
    const after = await em.findOneOrFail(OAuthAuthorization, { id: row.id }, { refresh: true });
    const view = await this.#view(after);
    if (updated === 0) {
      if (view.state === 'expired') throw expired();
      throw new AppError('invalid_request', bilingual('This request was already {state}; start the sign-in again in your MCP client.', '此请求已被{state}，请在 MCP 客户端中重新发起登录。', { state: decidedWord(view.state) }));
    }
    const iss = this.#config.server.baseUrl;
    const state: Record<string, string> = after.clientState ? { state: after.clientState } : {};
    const redirectTo = code
      ? withParams(after.redirectUri, { code, ...state, iss })
      : withParams(after.redirectUri, { error: 'access_denied', error_description: 'The user denied the request.', ...state, iss });
    return { request: view, redirectTo };
  }

  /** The account's live MCP grants, shown with its sessions (kind `mcp`). */
  async listForAccount(accountId: string): Promise<SessionView[]> {
    const rows = await this.#db.orm.em.getConnection().execute<GrantRow[]>(
      `select z."id", z."created_at", z."last_used_at", z."ip", z."user_agent", c."client_name", max(t."expires_at") as "expires_at"
         from "oauth_authorization" z
         join "oauth_client" c on c."id" = z."client_id"
         join "oauth_token" t on t."authorization_id" = z."id" and t."kind" = 'refresh' and t."rotated_at" is null and t."expires_at" > now()
        where z."account_id" = ? and z."status" = 'exchanged' and z."revoked_at" is null
        group by z."id", c."client_name"
        order by z."created_at" desc`,
      [accountId],
      'all',
    );
    return rows.map(grantView);
  }

  /** Revokes one of the account's grants; null when it has none with this id (so it may be a session's). */
  async revoke(accountId: string, id: string): Promise<SessionView | null> {
    if (!isUuid(id)) return null;
    const live = (await this.listForAccount(accountId)).find((grant) => grant.id === id);
    const hashes = await entityManager(this.#db).transactional((em) => revokeGrant(em, id, accountId));
    if (hashes === null) return null;
    await this.#identity.invalidate({ tokenHashes: hashes });
    return live ?? null;
  }

  /** Revokes every grant of an account ("sign out everywhere else" ends MCP clients too); returns how many. */
  async revokeAllForAccount(accountId: string): Promise<number> {
    const rows = await this.#db.orm.em.getConnection().execute<{ id: string }[]>(
      `update "oauth_authorization" set "revoked_at" = now(), "updated_at" = now()
        where "account_id" = ? and "status" = 'exchanged' and "revoked_at" is null returning "id"`,
      [accountId],
      'all',
    );
    if (rows.length > 0) await this.#identity.invalidateAccount(accountId);
    return rows.length;
  }

  async #find(principal: Principal, id: string): Promise<IOAuthAuthorization> {
    const row = isUuid(id) ? await entityManager(this.#db).findOne(OAuthAuthorization, { id }) : null;
    // A request someone else decided is not this member's to see.
    if (!row || (row.accountId !== null && row.accountId !== principal.accountId)) {
      throw new AppError('not_found', bilingual('There is no such sign-in request; start again in your MCP client.', '没有这个登录请求，请在 MCP 客户端中重新发起。'), { param: 'id' });
    }
    return row;
  }

  async #view(row: IOAuthAuthorization): Promise<ConsentView> {
    const client = await this.#clients.find(row.clientId);
    const state: ConsentState =
      row.status === 'approved' || row.status === 'exchanged' ? 'approved' : row.status === 'denied' ? 'denied' : row.expiresAt <= new Date() ? 'expired' : 'pending';
    return {
      id: row.id,
      clientName: client?.clientName ?? 'MCP client',
      clientUri: client?.clientUri ?? null,
      redirectUri: row.redirectUri,
      redirectHost: redirectHost(row.redirectUri),
      scope: row.scope,
      resource: row.resource ?? null,
      state,
      expiresAt: row.expiresAt,
    };
  }

  #consentPage(params: Record<string, string>): string {
    return withParams(`${this.#config.server.webUrl}/oauth/consent`, params);
  }

  /** Requests nobody decided on, and codes nobody exchanged, are of no use a day later. */
  async #pruneAbandoned(): Promise<void> {
    await this.#db.orm.em
      .getConnection()
      .execute(`delete from "oauth_authorization" where "status" in ('pending', 'approved', 'denied') and "expires_at" < now() - interval '1 day'`, [], 'run');
  }
}

interface GrantRow {
  id: string;
  created_at: Date;
  last_used_at: Date | null;
  ip: string | null;
  user_agent: string | null;
  client_name: string;
  expires_at: Date;
}

function grantView(row: GrantRow): SessionView {
  const createdAt = new Date(row.created_at);
  return {
    id: row.id,
    kind: 'mcp',
    clientName: row.client_name,
    userAgent: row.user_agent,
    ip: row.ip,
    createdAt,
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at) : createdAt,
    expiresAt: new Date(row.expires_at),
    current: false,
  };
}

function expired(): AppError {
  return new AppError('expired_token', bilingual('This sign-in request has expired; start the sign-in again in your MCP client.', '此登录请求已过期，请在 MCP 客户端中重新发起登录。'));
}

function decidedWord(state: ConsentState) {
  return state === 'denied' ? { en: 'denied', zh: '拒绝' } : { en: 'approved', zh: '批准' };
}

/** `uri` with `params` added to its query (keeping what it has). */
export function withParams(uri: string, params: Record<string, string>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.href;
}

function redirectHost(uri: string): string {
  const url = new URL(uri);
  return url.host !== '' ? url.host : `${url.protocol}//`;
}
