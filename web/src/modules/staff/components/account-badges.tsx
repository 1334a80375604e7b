/** Small labels the account list and the account page share. */
import { formatTime } from '../../account/components/format-time.ts';
import type { AccountRole, StaffAccountFragment } from '../graphql/staff-account.fragment.ts';
import { roleLabels } from './labels.ts';

export function RoleBadge({ role }: { role: AccountRole }) {
  return <span className={`role role--${role}`}>{roleLabels[role]}</span>;
}

export function PackageBadge({ packageId, until }: { packageId: string; until: string | null }) {
  return (
    <span className="package-badge" title={until ? `Until ${formatTime(until)}, then Free` : undefined}>
      <code>{packageId}</code>
      {until && <span className="muted"> until {formatTime(until)}</span>}
    </span>
  );
}

export function AccountStatus({ account }: { account: Pick<StaffAccountFragment, 'disabled' | 'disabledAt'> }) {
  return account.disabled ? (
    <span className="status-pill status-pill--disabled" title={account.disabledAt ? `Disabled ${formatTime(account.disabledAt)}` : undefined}>
      Disabled
    </span>
  ) : (
    <span className="status-pill status-pill--active">Active</span>
  );
}
