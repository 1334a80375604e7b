/**
 * The admin app's words for the server's codes (audit actions, target types, changed fields, roles), in
 * the reader's language. The server's lists are the record (audit.vocabulary.ts) and
 * test/unit/web-audit-words.test.ts holds these to them; a code from a newer server is shown as itself.
 */
import { useTranslation } from 'react-i18next';
import type { AccountRole } from '../graphql/staff-account.fragment.ts';

export const accountRoles: readonly AccountRole[] = ['member', 'support', 'admin'];

/** Audit actions staff meet, with their catalogue keys (i18next reads ":" as a namespace, so the keys differ). */
export const auditActions = {
  'account:disable': 'audit.action.accountDisable',
  'account:enable': 'audit.action.accountEnable',
  'account:set-package': 'audit.action.accountSetPackage',
  'api-key:revoke-any': 'audit.action.apiKeyRevokeAny',
  'session:end-any': 'audit.action.sessionEndAny',
  'staff:set-role': 'audit.action.staffSetRole',
  'application:approve': 'audit.action.applicationApprove',
  'application:reject': 'audit.action.applicationReject',
  'order:paid': 'audit.action.orderPaid',
  'order:refund': 'audit.action.orderRefund',
  'order:refund-request': 'audit.action.orderRefundRequest',
  'order:refund-fail': 'audit.action.orderRefundFail',
  'order:create': 'audit.action.orderCreate',
  'order:fail': 'audit.action.orderFail',
  'order:expire': 'audit.action.orderExpire',
  'order:requery': 'audit.action.orderRequery',
  'subscription:start': 'audit.action.subscriptionStart',
  'subscription:extend': 'audit.action.subscriptionExtend',
  'subscription:upgrade': 'audit.action.subscriptionUpgrade',
  'subscription:downgrade': 'audit.action.subscriptionDowngrade',
  'subscription:renew': 'audit.action.subscriptionRenew',
  'subscription:expire': 'audit.action.subscriptionExpire',
  'subscription:refund': 'audit.action.subscriptionRefund',
  'subscription:cancel': 'audit.action.subscriptionCancel',
  'subscription:resume': 'audit.action.subscriptionResume',
  'admin:create-user': 'audit.action.adminCreateUser',
  'credit:mint': 'audit.action.creditMint',
  'credit:redeem': 'audit.action.creditRedeem',
} as const;

export const targetTypes = ['account', 'api_key', 'session', 'organisation', 'application', 'order', 'credit_code', 'credit_code_batch'] as const;

/**
 * Every field an audit entry's before/after may hold (server/modules/audit/audit.vocabulary.ts), each with
 * a name in words — in the order a change lists them: what happened, then to what, how much, when.
 */
export const auditFields = [
  'state',
  'result',
  'refundFailure',
  'kind',
  'role',
  'planPackage',
  'planPackageUntil',
  'packageId',
  'nextPackageId',
  'accountId',
  'organisationId',
  'amountMinor',
  'creditMinor',
  'paidMinor',
  'amountMicros',
  'usesLeft',
  'codeCount',
  'batchId',
  'expiresAt',
  'note',
  'currency',
  'provider',
  'providerTradeNo',
  'periodStart',
  'periodEnd',
  'cancelAtPeriodEnd',
  'disabledAt',
  'sessionsEnded',
  'revokedAt',
  'name',
  'prefix',
  'last4',
  'password',
  'emailCode',
  'denied',
] as const;

const has = <T extends string>(list: readonly T[] | Record<T, unknown>, value: string): value is T =>
  Array.isArray(list) ? list.includes(value as T) : Object.hasOwn(list, value);

export function useAuditText() {
  const { t } = useTranslation('staff');
  return {
    action: (action: string): string => {
      if (has(auditActions, action)) return t(auditActions[action]);
      // A decision staff were refused on themselves: `<action>:denied`.
      const attempted = action.endsWith(':denied') ? action.slice(0, -':denied'.length) : null;
      return attempted && has(auditActions, attempted) ? t('audit.action.denied', { action: t(auditActions[attempted]) }) : action;
    },
    targetType: (type: string): string => (has(targetTypes, type) ? t(`audit.targetType.${type}`) : type),
    /** A changed field in words, or null when it has none (a field newer than this page: shown as its code). */
    field: (key: string): string | null => (has(auditFields, key) ? t(`audit.field.${key}`) : null),
    role: (role: AccountRole): string => t(`role.${role}`),
  };
}
