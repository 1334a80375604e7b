/**
 * Sessions (`svc_sess_`): the web session behind the `svc_membership_session` cookie (kind `web`, with an
 * idle timeout) and the bearer session tokens of device login. One table and one prefix; the kind decides
 * where each is accepted (`IdentityService.authenticateWebSession` takes only web sessions, bearer
 * authentication never does).
 */
import type { Config } from '../../../config/config.ts';
import type { Database } from '../../../db/orm.ts';
import type { CredentialResolver, ResolvedCredential } from '../credential-resolver.ts';
import { tokenPrefixes } from '../credential-token.ts';
import { accountColumns, accountCredential, type AccountCredentialRow } from './account-credential.ts';

export class SessionResolver implements CredentialResolver {
  readonly prefix = tokenPrefixes.session;
  readonly label = 'session token';
  readonly #db: Database;
  readonly #idleMs: number;

  constructor(config: Config, db: Database) {
    this.#db = db;
    this.#idleMs = config.auth.sessionIdleDays * 86_400_000;
  }

  /**
   * Disabling an account revokes its sessions; while it stays disabled they still resolve (as disabled), so
   * their holders hear `account_disabled` rather than a bare "unknown or revoked".
   */
  async resolve(hash: string): Promise<ResolvedCredential | null> {
    const row: AccountCredentialRow | undefined = await this.#db.orm.em.getConnection().execute<AccountCredentialRow>(
      `select s."id", s."kind", s."expires_at", s."last_used_at", ${accountColumns}
         from "session" s join "account" a on a."id" = s."account_id"
        where s."token_hash" = ? and (s."revoked_at" is null or a."disabled_at" is not null)`,
      [hash],
      'get',
    );
    if (!row) return null;
    const web = row.kind === 'web';
    return accountCredential(row, web ? 'web_session' : 'session_token', web ? this.#idleMs : null, 'session');
  }
}
