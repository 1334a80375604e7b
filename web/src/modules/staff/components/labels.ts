/**
 * The admin app's words for the server's codes (audit actions, target types, changed fields, roles), in
 * the reader's language. Codes the catalogue does not know yet are shown as the code itself.
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
} as const;

export const targetTypes = ['account', 'api_key', 'session', 'organisation', 'application', 'order'] as const;

/** Fields an audit entry's before/after may hold that have a name in words. */
const auditFields = ['planPackage', 'planPackageUntil', 'disabledAt', 'sessionsEnded', 'role', 'revokedAt'] as const;

const has = <T extends string>(list: readonly T[] | Record<T, unknown>, value: string): value is T =>
  Array.isArray(list) ? list.includes(value as T) : Object.hasOwn(list, value);

export function useAuditText() {
  const { t } = useTranslation('staff');
  return {
    action: (action: string): string => (has(auditActions, action) ? t(auditActions[action]) : action),
    targetType: (type: string): string => (has(targetTypes, type) ? t(`audit.targetType.${type}`) : type),
    /** A changed field in words, or null when it has none (then it is shown as its code). */
    field: (key: string): string | null => (has(auditFields, key) ? t(`audit.field.${key}`) : null),
    role: (role: AccountRole): string => t(`role.${role}`),
  };
}
