/**
 * What the resolvers of credentials that belong to a person's account share: the row they read (the
 * credential joined to its account) and how it becomes a `ResolvedCredential` billed to that account.
 */
import type { AccountRole } from '../../../authz/principal.ts';
import type { ResolvedCredential } from '../credential-resolver.ts';
import type { TouchedTable } from '../last-used.ts';
import type { CredentialKind } from '../../../authz/principal.ts';

/** Select these columns (names as written) from the credential joined to `account a`. */
export interface AccountCredentialRow {
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

/** The account columns every such query selects, after the credential's own. */
export const accountColumns = `a."id" as "account_id", a."email", a."role", a."plan_package", a."disabled_at"`;

export function accountCredential(row: AccountCredentialRow, kind: CredentialKind, idleMs: number | null, table: TouchedTable): ResolvedCredential {
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
