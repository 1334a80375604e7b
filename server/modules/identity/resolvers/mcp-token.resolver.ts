/**
 * MCP clients' OAuth access tokens (`svc_mcp_`): live while their authorization is not revoked and they have
 * not expired. The principal's credential id is the authorization's (what the member sees and revokes among
 * their sessions). `IdentityService` lets them in only where the caller names audience `mcp`.
 */
import type { Database } from '../../../db/orm.ts';
import type { CredentialResolver, ResolvedCredential } from '../credential-resolver.ts';
import { tokenPrefixes } from '../credential-token.ts';
import { accountColumns, accountCredential, type AccountCredentialRow } from './account-credential.ts';

export class McpTokenResolver implements CredentialResolver {
  readonly prefix = tokenPrefixes.mcpAccess;
  readonly label = 'MCP access token';
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Like sessions, a grant revoked by disabling the account still resolves while it is disabled, so the client hears `account_disabled`. */
  async resolve(hash: string): Promise<ResolvedCredential | null> {
    const row: AccountCredentialRow | undefined = await this.#db.orm.em.getConnection().execute<AccountCredentialRow>(
      `select z."id", 'mcp' as "kind", t."expires_at", z."last_used_at", ${accountColumns}
         from "oauth_token" t
         join "oauth_authorization" z on z."id" = t."authorization_id"
         join "account" a on a."id" = z."account_id"
        where t."token_hash" = ? and t."kind" = 'access' and z."status" = 'exchanged' and (z."revoked_at" is null or a."disabled_at" is not null)`,
      [hash],
      'get',
    );
    return row ? accountCredential(row, 'mcp_token', null, 'oauth_authorization') : null;
  }
}
