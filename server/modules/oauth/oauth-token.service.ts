/**
 * The token side of OAuth for MCP clients (`POST /oauth/token`, `POST /oauth/revoke`):
 *
 * - `authorization_code` (RFC 6749 §4.1.3, RFC 7636): the code is single use and lives 60 s; the client,
 *   redirect URI, PKCE verifier (S256) and resource must be the ones it was issued for. A code presented a
 *   second time is taken as stolen: the grant and every token issued from it are revoked (RFC 6749 §10.5).
 * - `refresh_token`: rotation — each refresh token works once and is replaced; one presented again revokes
 *   the grant (OAuth 2.1 §4.3.1, refresh token replay).
 * - revocation (RFC 7009): either token of a grant ends the grant.
 *
 * Each exchange runs in one transaction with the row locked, so two concurrent exchanges of one code or one
 * refresh token cannot both succeed. Revocations reach every instance through `IdentityService.invalidate`.
 */
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual, type Bilingual } from '../../errors/app-error.ts';
import { entityManager } from '../../db/unit-of-work.ts';
import { LockMode } from '@mikro-orm/core';
import { sha256Hex, tokenPrefixes } from '../identity/credential-token.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { ClientInfo } from '../../http/client-info.ts';
import { OAuthAuthorization, OAuthToken } from './oauth.entity.ts';
import { acceptedResource, issueTokens, revokeGrant, type IssuedTokens, type OAuthResources } from './oauth-grant.ts';
import { isCodeVerifier, verifiesS256 } from './pkce.ts';

type Outcome = { kind: 'tokens'; tokens: IssuedTokens } | { kind: 'refused'; error: AppError; revoke: string[] | null };

export class OAuthTokens {
  readonly #config: Config;
  readonly #db: Database;
  readonly #identity: IdentityService;
  readonly #resources: OAuthResources;

  constructor(config: Config, db: Database, deps: { identity: IdentityService; resources: OAuthResources }) {
    this.#config = config;
    this.#db = db;
    this.#identity = deps.identity;
    this.#resources = deps.resources;
  }

  /** `grant_type=authorization_code`. */
  async exchangeCode(body: Record<string, unknown>, client: ClientInfo = {}): Promise<IssuedTokens> {
    const code = required(body, 'code');
    const clientId = required(body, 'client_id');
    const redirectUri = required(body, 'redirect_uri');
    if (!isCodeVerifier(body.code_verifier)) {
      throw new AppError('invalid_request', bilingual('code_verifier is required: the PKCE verifier, 43 to 128 characters.', 'code_verifier 为必填项：即 PKCE 验证码，长度为 43 到 128 个字符。'), { param: 'code_verifier' });
    }
    const verifier = body.code_verifier;
    const resource = this.#resource(body);
    return this.#settle(
      entityManager(this.#db).transactional(async (em): Promise<Outcome> => {
        const row = await em.findOne(OAuthAuthorization, { codeHash: sha256Hex(code) }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!row) return refused(bilingual('The authorization code is unknown.', '授权码无效。'));
        if (row.status === 'exchanged' || row.revokedAt) {
          return refused(bilingual('The authorization code was already used; the tokens issued from it are revoked.', '该授权码已被使用，用它签发的令牌均已撤销。'), await revokeGrant(em, row.id));
        }
        if (row.status !== 'approved') return refused(bilingual('The authorization code is unknown.', '授权码无效。'));
        if (!row.codeExpiresAt || row.codeExpiresAt <= new Date()) return refused(bilingual('The authorization code has expired; sign in again.', '授权码已过期，请重新登录。'));
        if (row.clientId !== clientId.toLowerCase()) return refused(bilingual('The authorization code was issued to another client.', '该授权码是签发给另一个客户端的。'));
        if (row.redirectUri !== redirectUri) return refused(bilingual('redirect_uri is not the one the authorization code was issued for.', 'redirect_uri 与签发授权码时的不一致。'));
        if (!verifiesS256(verifier, row.codeChallenge)) return refused(bilingual('code_verifier does not match the code_challenge of the authorization request.', 'code_verifier 与授权请求中的 code_challenge 不匹配。'));
        const bound = row.resource ?? null;
        if (resource !== null && bound !== null && resource !== bound) return { kind: 'refused', error: wrongResource(bound), revoke: null };
        row.status = 'exchanged';
        row.resource ??= resource;
        row.ip = client.ip?.slice(0, 64) ?? null;
        row.userAgent = client.userAgent?.slice(0, 512) ?? null;
        row.lastUsedAt = new Date();
        return { kind: 'tokens', tokens: issueTokens(em, this.#config, row.id, row.scope) };
      }),
    );
  }

  /** `grant_type=refresh_token`: a new access token and a new refresh token; the old refresh token is spent. */
  async refresh(body: Record<string, unknown>): Promise<IssuedTokens> {
    const token = required(body, 'refresh_token');
    const clientId = required(body, 'client_id');
    const resource = this.#resource(body);
    if (!token.startsWith(tokenPrefixes.mcpRefresh)) throw refused(bilingual('The refresh token is unknown.', '刷新令牌无效。')).error;
    return this.#settle(
      entityManager(this.#db).transactional(async (em): Promise<Outcome> => {
        const row = await em.findOne(OAuthToken, { tokenHash: sha256Hex(token), kind: 'refresh' }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        const grant = row ? await em.findOne(OAuthAuthorization, { id: row.authorizationId }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
        if (!row || !grant) return refused(bilingual('The refresh token is unknown.', '刷新令牌无效。'));
        if (grant.revokedAt) return refused(bilingual('The refresh token was revoked; sign in again.', '刷新令牌已被撤销，请重新登录。'));
        if (row.rotatedAt) {
          return refused(bilingual('The refresh token was already used; its grant is revoked, sign in again.', '该刷新令牌已被使用过，其授权已撤销，请重新登录。'), await revokeGrant(em, grant.id));
        }
        if (row.expiresAt <= new Date()) return refused(bilingual('The refresh token has expired; sign in again.', '刷新令牌已过期，请重新登录。'));
        if (grant.clientId !== clientId.toLowerCase()) return refused(bilingual('The refresh token was issued to another client.', '该刷新令牌是签发给另一个客户端的。'));
        const bound = grant.resource ?? null;
        if (resource !== null && bound !== null && resource !== bound) return { kind: 'refused', error: wrongResource(bound), revoke: null };
        row.rotatedAt = new Date();
        return { kind: 'tokens', tokens: issueTokens(em, this.#config, grant.id, grant.scope) };
      }),
    );
  }

  /** RFC 7009: ends the grant the token belongs to. Unknown tokens are not an error (§2.2). */
  async revoke(body: Record<string, unknown>): Promise<void> {
    const token = required(body, 'token');
    const hashes = await entityManager(this.#db).transactional(async (em) => {
      const row = await em.findOne(OAuthToken, { tokenHash: sha256Hex(token) });
      return row ? revokeGrant(em, row.authorizationId) : null;
    });
    if (hashes) await this.#identity.invalidate({ tokenHashes: hashes });
  }

  /** Commits first, then drops revoked tokens from every instance's cache, then answers. */
  async #settle(transaction: Promise<Outcome>): Promise<IssuedTokens> {
    const outcome = await transaction;
    if (outcome.kind === 'tokens') return outcome.tokens;
    if (outcome.revoke) await this.#identity.invalidate({ tokenHashes: outcome.revoke });
    throw outcome.error;
  }

  /** The optional RFC 8707 `resource` of a token request; 400 `invalid_target` when it is not svc's. */
  #resource(body: Record<string, unknown>): string | null {
    if (body.resource === undefined) return null;
    const resource = acceptedResource(this.#resources, body.resource);
    if (resource === undefined) throw wrongResource(this.#resources[0]);
    return resource;
  }
}

function refused(message: Bilingual, revoke: string[] | null = null): { kind: 'refused'; error: AppError; revoke: string[] | null } {
  return { kind: 'refused', error: new AppError('invalid_grant', message), revoke };
}

function wrongResource(expected: string): AppError {
  return new AppError('invalid_target', bilingual('resource must be {resource}, the resource this grant is for.', 'resource 必须是 {resource}，即此授权所针对的资源。', { resource: expected }), { param: 'resource' });
}

function required(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096) {
    throw new AppError('invalid_request', bilingual('{name} is required.', '{name} 为必填项。', { name }), { param: name });
  }
  return value;
}
