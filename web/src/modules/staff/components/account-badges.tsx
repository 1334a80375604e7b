/** Small labels the account list and the account page share. */
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import type { AccountRole, StaffAccountFragment } from '../graphql/staff-account.fragment.ts';

export function RoleBadge({ role }: { role: AccountRole }) {
  const { t } = useTranslation('staff');
  return <span className={`role role--${role}`}>{t(`role.${role}`)}</span>;
}

export function PackageBadge({ packageId, until }: { packageId: string; until: string | null }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  return (
    <span className="package-badge" title={until ? t('package.untilTitle', { time: format.dateTime(until) }) : undefined}>
      <code>{packageId}</code>
      {until && <span className="muted"> {t('package.until', { time: format.dateTime(until) })}</span>}
    </span>
  );
}

export function AccountStatus({ account }: { account: Pick<StaffAccountFragment, 'disabled' | 'disabledAt'> }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  return account.disabled ? (
    <span className="status-pill status-pill--disabled" title={account.disabledAt ? t('status.disabledAt', { time: format.dateTime(account.disabledAt) }) : undefined}>
      {t('status.disabled')}
    </span>
  ) : (
    <span className="status-pill status-pill--active">{t('status.active')}</span>
  );
}
