/**
 * How staff lookups read accounts straight from SQL (the list, the search box): the columns, the row as an
 * `AccountView`, and the index-backed ways an account's email is matched (Migration20261208010000): a
 * prefix of the address, or a prefix of its domain — `like 'abc%'` on `text_pattern_ops` indexes, which
 * PostgreSQL and PGlite serve with a range scan at any size. A substring (`%abc%`) would read every row.
 */
import { isLocale } from '../../i18n/locale.ts';
import type { AccountKind } from '../account/account.entity.ts';
import type { AccountRole } from '../../authz/principal.ts';
import type { AccountView } from '../account/account.service.ts';

/** The columns `accountView` reads, qualified by `alias`. */
export function accountColumns(alias: string): string {
  const a = `${alias}.`;
  return `${a}"id", (extract(epoch from ${a}"created_at") * 1000000)::bigint as "created_us", ${a}"created_at", ${a}"email", ${a}"display_name", ${a}"role",
          ${a}"plan_package", ${a}"plan_package_until", ${a}"disabled_at", ${a}"email_verified_at" is not null as "email_verified",
          ${a}"password_hash" is not null as "has_password", ${a}"locale", ${a}"kind"`;
}

export interface AccountRow {
  id: string;
  created_us: string | number;
  created_at: Date | string;
  email: string;
  display_name: string | null;
  role: AccountRole;
  plan_package: string;
  plan_package_until: Date | string | null;
  disabled_at: Date | string | null;
  email_verified: boolean;
  has_password: boolean;
  locale: string | null;
  kind: AccountKind;
}

export function accountView(row: AccountRow): AccountView {
  const date = (value: Date | string | null) => (value === null ? null : new Date(value));
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    role: row.role,
    planPackage: row.plan_package,
    planPackageUntil: date(row.plan_package_until),
    disabledAt: date(row.disabled_at),
    emailVerified: row.email_verified,
    hasPassword: row.has_password,
    createdAt: new Date(row.created_at),
    locale: isLocale(row.locale) ? row.locale : null,
    kind: row.kind ?? 'person',
  };
}

/**
 * What a piece of an email address matches, and on which index: `@acme` (a domain, or the start of one)
 * → the domain prefix; anything else → the address prefix. Both are `like` patterns with `!` escaping, so
 * `%` and `_` are plain text.
 */
export function emailMatch(text: string, alias = ''): { sql: string; pattern: string; order: string } {
  const a = alias ? `${alias}.` : '';
  const lower = text.toLowerCase();
  if (lower.startsWith('@')) {
    const domain = `split_part(${a}"email", '@', 2)`;
    return { sql: `${domain} like ? escape '!'`, pattern: `${likeEscape(lower.slice(1))}%`, order: `${domain} using ~<~, ${a}"email" using ~<~` };
  }
  return { sql: `${a}"email" like ? escape '!'`, pattern: `${likeEscape(lower)}%`, order: `${a}"email" using ~<~` };
}

/** Text that reads as a domain (`acme.com`): letters, digits and hyphens around dots. */
export function looksLikeDomain(text: string): boolean {
  return /^[\p{L}\p{N}-]+(\.[\p{L}\p{N}-]+)+$/u.test(text);
}

/**
 * The accounts list's condition for a search: `emailMatch`, and for what reads as a domain (`acme.com`)
 * also the accounts at it — two index range scans the planner ORs together. `?` are bound to `params`.
 */
export function accountsMatch(text: string): { sql: string; params: string[] } {
  const match = emailMatch(text);
  if (text.includes('@') || !looksLikeDomain(text)) return { sql: match.sql, params: [match.pattern] };
  const domain = emailMatch(`@${text}`);
  return { sql: `(${match.sql} or ${domain.sql})`, params: [match.pattern, domain.pattern] };
}

/** `text` with `!`, `%` and `_` escaped for `like … escape '!'`. */
export function likeEscape(text: string): string {
  return text.replace(/[!%_]/g, (c) => `!${c}`);
}
