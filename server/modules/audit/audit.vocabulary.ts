/**
 * Every action the audit log records and every field its `before` / `after` may hold. The writers are
 * typed by these lists, so a new action or field is added here first — and test/unit/web-audit-words.test.ts
 * then fails until the admin app has words for it in English and Chinese (`web/src/locales/*\/staff.json`,
 * `audit.action.*` and `audit.field.*`): staff never read a raw code.
 */
export const auditActions = [
  'account:disable',
  'account:enable',
  'account:set-package',
  'api-key:revoke-any',
  'session:end-any',
  'staff:set-role',
  'application:approve',
  'application:reject',
  'order:create',
  'order:paid',
  'order:refund',
  'order:refund-request',
  'order:refund-fail',
  'order:fail',
  'order:expire',
  'order:requery',
  'subscription:start',
  'subscription:extend',
  'subscription:upgrade',
  'subscription:downgrade',
  'subscription:renew',
  'subscription:expire',
  'subscription:refund',
  'subscription:cancel',
  'subscription:resume',
  'admin:create-user',
  'credit:mint',
  'credit:redeem',
] as const;

export type AuditAction = (typeof auditActions)[number];

/** An action as recorded: itself, or `<action>:denied` when staff were refused it on themselves (self-decision.ts). */
export type RecordedAuditAction = AuditAction | `${AuditAction}:denied`;

export const auditFields = [
  // Accounts
  'planPackage',
  'planPackageUntil',
  'disabledAt',
  'sessionsEnded',
  'role',
  'password',
  'emailCode',
  // Keys (a revoked key's identity: name, prefix and last 4; its kind)
  'revokedAt',
  'name',
  'prefix',
  'last4',
  'kind',
  // Applications and orders
  'state',
  'accountId',
  'organisationId',
  'packageId',
  'provider',
  'amountMinor',
  'creditMinor',
  'currency',
  'providerTradeNo',
  'result',
  'refundFailure',
  // Subscriptions
  'paidMinor',
  'periodStart',
  'periodEnd',
  'cancelAtPeriodEnd',
  'nextPackageId',
  // Credit and its codes
  'amountMicros',
  'usesLeft',
  'batchId',
  'codeCount',
  'expiresAt',
  'note',
  // A decision refused on themselves
  'denied',
] as const;

export type AuditField = (typeof auditFields)[number];

/** What an entry's `before` or `after` holds: some of the fields, each with its value then. */
export type AuditFields = { [K in AuditField]?: unknown };
