/** Personal API keys (`svc_live_`): live until revoked, billed to the member who made them. */
import type { Database } from '../../../db/orm.ts';
import type { CredentialResolver, ResolvedCredential } from '../credential-resolver.ts';
import { tokenPrefixes } from '../credential-token.ts';
import { accountColumns, accountCredential, type AccountCredentialRow } from './account-credential.ts';
import { keyExpiry, keyLimitColumns, keyLimitsOf, type KeyLimitRow } from './key-limits.ts';

export class PersonalKeyResolver implements CredentialResolver {
  readonly prefix = tokenPrefixes.personalKey;
  readonly label = 'API key';
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async resolve(hash: string): Promise<ResolvedCredential | null> {
    const row: (AccountCredentialRow & KeyLimitRow) | undefined = await this.#db.orm.em.getConnection().execute<AccountCredentialRow & KeyLimitRow>(
      `select k."id", k."kind", k."expires_at", k."last_used_at", ${keyLimitColumns}, ${accountColumns}
         from "api_key" k join "account" a on a."id" = k."account_id"
        where k."token_hash" = ? and k."kind" = 'personal' and k."revoked_at" is null`,
      [hash],
      'get',
    );
    if (!row) return null;
    const found = accountCredential({ ...row, expires_at: null }, 'api_key', null, 'api_key');
    const limits = keyLimitsOf(row);
    if (limits) found.principal.credential.limits = limits;
    found.expiresAt = keyExpiry(row);
    return found;
  }
}
