/** Words the admin app shows for the server's codes; every user-visible string of the module is here or in its page. */
import type { UsageStatus } from '../../usage/graphql/usage-record.fragment.ts';
import type { AccountRole } from '../graphql/staff-account.fragment.ts';

export const statusLabels: Record<UsageStatus, string> = {
  ok: 'Completed',
  refunded: 'Refunded',
  client_disconnected: 'Client left',
  upstream_failed: 'Model failed',
  abandoned: 'Abandoned',
};

export const roleLabels: Record<AccountRole, string> = { member: 'Member', support: 'Support', admin: 'Admin' };

/** Audit actions staff meet, in words; unknown ones are shown as their code. */
export const actionLabels: Record<string, string> = {
  'account:disable': 'Disabled account',
  'account:enable': 'Enabled account',
  'account:set-package': 'Changed package',
  'api-key:revoke-any': 'Revoked API key',
  'session:end-any': 'Ended sessions',
  'staff:set-role': 'Changed role',
  'application:approve': 'Approved application',
  'application:reject': 'Rejected application',
  'order:paid': 'Order paid',
  'order:refund': 'Refunded order',
};

export const targetTypeLabels: Record<string, string> = {
  account: 'Account',
  api_key: 'API key',
  session: 'Session',
  organisation: 'Organisation',
  application: 'Application',
  order: 'Order',
};

export function actionLabel(action: string): string {
  return actionLabels[action] ?? action;
}
