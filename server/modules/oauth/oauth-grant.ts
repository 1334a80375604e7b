/**
 * What the authorize side and the token side of OAuth share: the resources svc issues MCP tokens for
 * (RFC 8707), minting a token pair for a grant, and revoking a grant with everything issued from it.
 */
import type { Config } from '../../config/config.ts';
import type { Em } from '../../db/orm.ts';
import { newToken, sha256Hex, tokenPrefixes } from '../identity/credential-token.ts';
import { OAuthToken } from './oauth.entity.ts';

/**
 * The resources svc issues MCP tokens for (RFC 8707 `resource`), as the protected resource metadata names
 * them; the first is the one to tell clients. Given by the composition root: the MCP endpoint's URL
 * (path-suffixed metadata) and the server's own (root metadata).
 */
export type OAuthResources = readonly [string, ...string[]];

/** The resource a request names, as listed, or undefined when it is not one of svc's (a trailing `/` is forgiven). */
export function acceptedResource(resources: OAuthResources, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const wanted = value.endsWith('/') ? value.slice(0, -1) : value;
  return resources.find((resource) => resource === wanted);
}

export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Mints an access token and a refresh token for a grant, inside the caller's transaction. */
export function issueTokens(em: Em, config: Config, authorizationId: string, scope: string): IssuedTokens {
  const access = newToken(tokenPrefixes.mcpAccess);
  const refresh = newToken(tokenPrefixes.mcpRefresh);
  const now = Date.now();
  const { accessTokenSeconds, refreshTokenDays } = config.auth.oauth;
  em.create(OAuthToken, { authorizationId, kind: 'access', tokenHash: sha256Hex(access), expiresAt: new Date(now + accessTokenSeconds * 1000), rotatedAt: null });
  em.create(OAuthToken, { authorizationId, kind: 'refresh', tokenHash: sha256Hex(refresh), expiresAt: new Date(now + refreshTokenDays * 86_400_000), rotatedAt: null });
  return { access_token: access, token_type: 'Bearer', expires_in: accessTokenSeconds, refresh_token: refresh, scope };
}

/**
 * Revokes a grant (of `accountId`, when given) inside the caller's transaction. Returns the hashes of its
 * access tokens, for the caller to drop from every instance's cache once committed; null when there was
 * no such live grant.
 */
export async function revokeGrant(em: Em, authorizationId: string, accountId?: string): Promise<string[] | null> {
  const connection = em.getConnection();
  const context = em.getTransactionContext();
  const revoked = await connection.execute<{ id: string }[]>(
    `update "oauth_authorization" set "revoked_at" = now(), "updated_at" = now()
      where "id" = ? and "revoked_at" is null ${accountId === undefined ? '' : 'and "account_id" = ?'} returning "id"`,
    accountId === undefined ? [authorizationId] : [authorizationId, accountId],
    'all',
    context,
  );
  if (revoked.length === 0) return null;
  const tokens = await connection.execute<{ token_hash: string }[]>(
    `select "token_hash" from "oauth_token" where "authorization_id" = ? and "kind" = 'access'`,
    [authorizationId],
    'all',
    context,
  );
  return tokens.map((row) => row.token_hash);
}
