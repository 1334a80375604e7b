/**
 * Sessions: the web session behind the `svc_membership_session` cookie and the bearer session tokens handed
 * out by device login, plus the OAuth grants of MCP clients (kept by the OAuth module, shown here as kind
 * `mcp`). Members list them and revoke any; sign-out and revocation take effect on every instance at once
 * (`IdentityService.invalidate`).
 */
import type { Config } from '../../config/config.ts';
import type { Database, Em } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { Principal } from '../../authz/principal.ts';
import type { ClientInfo } from '../../http/client-info.ts';
import * as authz from '../../authz/authz.ts';
import { newToken, sha256Hex, tokenPrefixes } from '../identity/credential-token.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import { Session, type ISession, type SessionKind } from './session.entity.ts';
import { isUuid } from '../../db/ids.ts';
import { entityManager } from '../../db/unit-of-work.ts';

export interface SessionView {
  id: string;
  /** `mcp`: an MCP client's OAuth grant (its access and refresh tokens). */
  kind: SessionKind | 'mcp';
  clientName: string | null;
  userAgent: string | null;
  ip: string | null;
  createdAt: Date;
  lastUsedAt: Date;
  expiresAt: Date;
  /** True for the session making this request. */
  current: boolean;
}

export interface IssuedSession {
  /** The secret: goes into the cookie or to the device once, never stored. */
  token: string;
  session: ISession;
}

const day = 86_400_000;

/** Sign-ins kept elsewhere that members see and end among their sessions: MCP clients' OAuth grants. */
export interface GrantSessions {
  listForAccount(accountId: string): Promise<SessionView[]>;
  /** Ends the account's grant with this id; null when it has none (the id may be a session's). */
  revoke(accountId: string, id: string): Promise<SessionView | null>;
  revokeAllForAccount(accountId: string): Promise<number>;
}

const noGrants: GrantSessions = { listForAccount: async () => [], revoke: async () => null, revokeAllForAccount: async () => 0 };

export class SessionService {
  readonly #config: Config;
  readonly #db: Database;
  readonly #identity: IdentityService;
  readonly #grants: GrantSessions;

  constructor(config: Config, db: Database, identity: IdentityService, grants: GrantSessions = noGrants) {
    this.#config = config;
    this.#db = db;
    this.#identity = identity;
    this.#grants = grants;
  }

  /**
   * Starts a web session (sign-in). Rotation: the session the browser had before, if any, is revoked, so a
   * session id planted before sign-in never becomes authenticated.
   */
  async startWebSession(accountId: string, client: ClientInfo, previousToken?: string | null): Promise<IssuedSession> {
    if (previousToken) await this.revokeByToken(previousToken);
    return this.#issue(accountId, 'web', this.#config.auth.sessionAbsoluteDays * day, client, null);
  }

  /** Mints the bearer session token of an approved device login (inside the caller's transaction when `em` is given). */
  issueDeviceSession(accountId: string, clientName: string, client: ClientInfo, em?: Em): Promise<IssuedSession> {
    return this.#issue(accountId, 'device', this.#config.auth.deviceSessionDays * day, client, clientName, em);
  }

  /**
   * The caller's live sessions, newest first. Like every session change it needs the web session (authz
   * `session:manage`): a leaked key or device token must not see where the member signs in, nor sign their
   * browsers out.
   */
  async list(principal: authz.Actor): Promise<SessionView[]> {
    authz.assert(principal, 'session:manage');
    return this.listForAccount(principal.accountId, principal);
  }

  /**
   * An account's live sessions, newest first, without a caller check: for callers that have authorised
   * already (staff looking an account up). `viewer` marks the session making the request as `current`.
   */
  async listForAccount(accountId: string, viewer: Principal | null = null): Promise<SessionView[]> {
    const now = new Date();
    const idleCutoff = new Date(now.getTime() - this.#config.auth.sessionIdleDays * day);
    const rows = await entityManager(this.#db).find(
      Session,
      {
        accountId,
        revokedAt: null,
        expiresAt: { $gt: now },
        $or: [{ kind: 'device' }, { lastUsedAt: { $gt: idleCutoff } }],
      },
      { orderBy: { createdAt: 'desc' } },
    );
    const grants = await this.#grants.listForAccount(accountId);
    return [...rows.map((row) => this.#view(row, viewer)), ...grants].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  }

  /** Revokes one of the caller's sessions (any kind). */
  async revoke(principal: authz.Actor, sessionId: string): Promise<SessionView> {
    authz.assert(principal, 'session:manage');
    const em = entityManager(this.#db);
    const row = isUuid(sessionId) ? await em.findOne(Session, { id: sessionId, accountId: principal.accountId }) : null;
    if (!row) {
      const grant = await this.#grants.revoke(principal.accountId, sessionId);
      if (grant) return grant;
      const message = isUuid(sessionId)
        ? bilingual('No session {id} on your account.', '您的账户中没有会话 {id}。', { id: sessionId })
        : bilingual('That is not a session id.', '这不是会话 ID。');
      throw new AppError('not_found', message, { param: 'id' });
    }
    if (!row.revokedAt) {
      row.revokedAt = new Date();
      await em.flush();
    }
    await this.#identity.invalidate({ tokenHashes: [row.tokenHash] });
    return this.#view(row, principal);
  }

  /** Revokes every session of the caller except the current one ("sign out everywhere else"), MCP clients' grants included. */
  async revokeOthers(principal: authz.Actor): Promise<number> {
    authz.assert(principal, 'session:manage');
    const rows = await this.#db.orm.em.getConnection().execute<{ token_hash: string }[]>(
      `update "session" set "revoked_at" = now(), "updated_at" = now()
        where "account_id" = ? and "revoked_at" is null and "id" <> ? returning "token_hash"`,
      [principal.accountId, principal.credential.id],
    );
    if (rows.length > 0) await this.#identity.invalidate({ tokenHashes: rows.map((row) => row.token_hash) });
    return rows.length + (await this.#grants.revokeAllForAccount(principal.accountId));
  }

  /** `svc logout`: a device-login session token revokes itself. An API key cannot sign out. */
  async endBearerSession(principal: Principal): Promise<void> {
    if (principal.credential.kind !== 'session_token') {
      throw new AppError('invalid_request', bilingual('An API key cannot sign out; revoke it at /account instead.', 'API 密钥无法退出登录，请在 /account 撤销该密钥。'));
    }
    const em = entityManager(this.#db);
    const row = await em.findOneOrFail(Session, { id: principal.credential.id, accountId: principal.accountId });
    row.revokedAt ??= new Date();
    await em.flush();
    await this.#identity.invalidate({ tokenHashes: [row.tokenHash] });
  }

  /** Sign-out: revokes the session a token belongs to. Unknown tokens are ignored. */
  async revokeByToken(token: string): Promise<void> {
    const hash = sha256Hex(token);
    await this.#db.orm.em
      .getConnection()
      .execute(`update "session" set "revoked_at" = now(), "updated_at" = now() where "token_hash" = ? and "revoked_at" is null`, [hash], 'run');
    await this.#identity.invalidate({ tokenHashes: [hash] });
  }

  async #issue(
    accountId: string,
    kind: SessionKind,
    lifetimeMs: number,
    client: ClientInfo,
    clientName: string | null,
    em: Em = entityManager(this.#db),
  ): Promise<IssuedSession> {
    const token = newToken(tokenPrefixes.session);
    const now = new Date();
    const session = em.create(Session, {
      accountId,
      kind,
      tokenHash: sha256Hex(token),
      clientName,
      userAgent: client.userAgent?.slice(0, 512) ?? null,
      ip: client.ip?.slice(0, 64) ?? null,
      lastUsedAt: now,
      expiresAt: new Date(now.getTime() + lifetimeMs),
      revokedAt: null,
    });
    await em.flush();
    return { token, session };
  }

  #view(row: ISession, principal: Principal | null): SessionView {
    return {
      id: row.id,
      kind: row.kind,
      clientName: row.clientName ?? null,
      userAgent: row.userAgent ?? null,
      ip: row.ip ?? null,
      createdAt: row.createdAt,
      lastUsedAt: row.lastUsedAt,
      expiresAt: row.expiresAt,
      current: principal?.credential.id === row.id,
    };
  }
}
