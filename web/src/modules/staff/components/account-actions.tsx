/**
 * What support does to an account from its page: change its package (with a reason and an optional end),
 * disable or enable it, end every session; admins also change its role. Each opens a confirming dialog;
 * the page reloads the account and its audit entries afterwards.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { usePlanText } from '../../plan/components/plan-labels.ts';
import { ASSIGNABLE_PLANS_QUERY } from '../graphql/assignable-plans.query.ts';
import { DISABLE_ACCOUNT } from '../graphql/disable-account.mutation.ts';
import { ENABLE_ACCOUNT } from '../graphql/enable-account.mutation.ts';
import { END_SESSIONS } from '../graphql/end-sessions.mutation.ts';
import { SET_ACCOUNT_PACKAGE } from '../graphql/set-account-package.mutation.ts';
import { SET_ACCOUNT_ROLE } from '../graphql/set-account-role.mutation.ts';
import type { AccountRole, StaffAccountFragment } from '../graphql/staff-account.fragment.ts';
import { ActionDialog } from './action-dialog.tsx';
import { accountRoles } from './labels.ts';

type Open = 'package' | 'disable' | 'enable' | 'sessions' | 'role' | null;

/** Queries the account page shows, refreshed after every action. */
export const accountQueries = ['AccountDetail', 'AccountAudit'];

/** What an action did, said on the page. Kept as data, not text, so it follows a change of language. */
export type Notice =
  | { kind: 'package'; packageId: string; until: string | null }
  | { kind: 'disabled' }
  | { kind: 'enabled' }
  | { kind: 'sessions'; count: number }
  | { kind: 'role'; role: AccountRole }
  | { kind: 'keyRevoked'; key: string };

export function NoticeText({ notice }: { notice: Notice }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const code = { code: <code /> };
  switch (notice.kind) {
    case 'package':
      return notice.until ? (
        <Trans t={t} i18nKey="actions.package.doneUntil" values={{ package: notice.packageId, time: format.dateTime(notice.until) }} components={code} />
      ) : (
        <Trans t={t} i18nKey="actions.package.done" values={{ package: notice.packageId }} components={code} />
      );
    case 'disabled':
      return t('actions.disableDialog.done');
    case 'enabled':
      return t('actions.enableDialog.done');
    case 'sessions':
      return t('actions.sessionsDialog.done', { count: notice.count });
    case 'role':
      return t('actions.roleDialog.done', { role: t(`role.${notice.role}`) });
    case 'keyRevoked':
      return <Trans t={t} i18nKey="actions.keyRevoked" values={{ key: notice.key }} components={code} />;
  }
}

export interface AccountActionsProps {
  account: StaffAccountFragment;
  sessionCount: number;
  /** The signed-in staff member's own account id. */
  viewerId: string;
  canManageStaff: boolean;
  /** Says what happened, on the page (e.g. "Package changed to pro."). */
  onDone(notice: Notice): void;
}

export function AccountActions({ account, sessionCount, viewerId, canManageStaff, onDone }: AccountActionsProps) {
  const { t } = useTranslation('staff');
  const [open, setOpen] = useState<Open>(null);
  const close = () => setOpen(null);
  const done = (notice: Notice) => {
    setOpen(null);
    onDone(notice);
  };
  const [setPackage] = useMutation(SET_ACCOUNT_PACKAGE, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  const [disable] = useMutation(DISABLE_ACCOUNT, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  const [enable] = useMutation(ENABLE_ACCOUNT, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  const [endSessions] = useMutation(END_SESSIONS, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  const [setRole] = useMutation(SET_ACCOUNT_ROLE, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  // The same rules the server applies (it refuses anyway): say so instead of offering buttons that fail.
  if (account.id === viewerId) {
    return <p className="account-actions account-actions--note muted">{t('actions.ownAccount')}</p>;
  }
  if (account.role !== 'member' && !canManageStaff) {
    return <p className="account-actions account-actions--note muted">{t('actions.staffAccount')}</p>;
  }
  return (
    <div className="account-actions" role="toolbar" aria-label={t('actions.label')}>
      <button type="button" className="button button--ghost" onClick={() => setOpen('package')}>
        {t('actions.changePackage')}
      </button>
      {account.disabled ? (
        <button type="button" className="button button--ghost" onClick={() => setOpen('enable')}>
          {t('actions.enable')}
        </button>
      ) : (
        <button type="button" className="button button--ghost button--ghost-danger" onClick={() => setOpen('disable')}>
          {t('actions.disable')}
        </button>
      )}
      <button
        type="button"
        className="button button--ghost"
        onClick={() => setOpen('sessions')}
        disabled={sessionCount === 0}
        title={sessionCount === 0 ? t('actions.noSessions') : undefined}
      >
        {t('actions.endSessions')}
      </button>
      {canManageStaff && (
        <button type="button" className="button button--ghost" onClick={() => setOpen('role')}>
          {t('actions.changeRole')}
        </button>
      )}

      {open === 'package' && (
        <PackageDialog
          account={account}
          onClose={close}
          onConfirm={async (packageId, until, reason) => {
            await setPackage({ variables: { accountId: account.id, packageId, reason, until } });
            done({ kind: 'package', packageId, until });
          }}
        />
      )}
      {open === 'disable' && (
        <ActionDialog
          title={t('actions.disableDialog.title', { email: account.email })}
          confirmLabel={t('actions.disable')}
          danger
          reason="required"
          reasonPlaceholder={t('actions.disableDialog.placeholder')}
          onClose={close}
          onConfirm={async (reason) => {
            await disable({ variables: { id: account.id, reason } });
            done({ kind: 'disabled' });
          }}
        >
          <p>
            {t('actions.disableDialog.body')}{' '}
            {sessionCount === 0 ? t('actions.disableDialog.noSessions') : t('actions.disableDialog.sessions', { count: sessionCount })}{' '}
            {t('actions.disableDialog.keysKept')}
          </p>
        </ActionDialog>
      )}
      {open === 'enable' && (
        <ActionDialog
          title={t('actions.enableDialog.title', { email: account.email })}
          confirmLabel={t('actions.enable')}
          reason="optional"
          onClose={close}
          onConfirm={async (reason) => {
            await enable({ variables: { id: account.id, reason: reason || null } });
            done({ kind: 'enabled' });
          }}
        >
          <p>{t('actions.enableDialog.body')}</p>
        </ActionDialog>
      )}
      {open === 'sessions' && (
        <ActionDialog
          title={t('actions.sessionsDialog.title', { email: account.email })}
          confirmLabel={t('actions.sessionsDialog.confirm', { count: sessionCount })}
          danger
          reason="required"
          reasonPlaceholder={t('actions.sessionsDialog.placeholder')}
          onClose={close}
          onConfirm={async (reason) => {
            const result = await endSessions({ variables: { accountId: account.id, reason } });
            done({ kind: 'sessions', count: result.data?.endSessions ?? 0 });
          }}
        >
          <p>{t('actions.sessionsDialog.body')}</p>
        </ActionDialog>
      )}
      {open === 'role' && (
        <RoleDialog
          account={account}
          onClose={close}
          onConfirm={async (role, reason) => {
            await setRole({ variables: { accountId: account.id, role, reason: reason || null } });
            done({ kind: 'role', role });
          }}
        />
      )}
    </div>
  );
}

function PackageDialog({ account, onClose, onConfirm }: { account: StaffAccountFragment; onClose(): void; onConfirm(packageId: string, until: string | null, reason: string): Promise<void> }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const text = usePlanText();
  const id = useId();
  const plans = useQuery(ASSIGNABLE_PLANS_QUERY);
  const [packageId, setPackageId] = useState(account.planPackage);
  const [endDate, setEndDate] = useState('');
  const options =
    plans.data?.assignablePlans.flatMap((plan) => plan.packages.map((pkg) => ({ id: pkg.id, label: t('actions.package.option', { name: text.packageLabel(plan, pkg), id: pkg.id }) }))) ?? [];
  if (!options.some((option) => option.id === account.planPackage)) options.unshift({ id: account.planPackage, label: account.planPackage });
  const today = new Date();
  const tomorrow = new Date(today.getFullYear(), today.getMonth(), today.getDate() + 1);
  const code = { code: <code /> };
  return (
    <ActionDialog
      title={t('actions.package.title', { email: account.email })}
      confirmLabel={t('actions.changePackage')}
      reason="required"
      reasonPlaceholder={t('actions.package.placeholder')}
      onClose={onClose}
      onConfirm={(reason) => onConfirm(packageId, endDate ? new Date(`${endDate}T00:00:00`).toISOString() : null, reason)}
      fields={
        <>
          <label className="field" htmlFor={`${id}-package`}>
            <span>{t('actions.package.field')}</span>
            <select id={`${id}-package`} value={packageId} onChange={(event) => setPackageId(event.target.value)}>
              {options.map((option) => (
                <option key={option.id} value={option.id}>
                  {option.label}
                </option>
              ))}
            </select>
          </label>
          <label className="field" htmlFor={`${id}-until`}>
            <span>
              {t('actions.package.endsOn')} <span className="muted">{t('optional')}</span>
            </span>
            <input id={`${id}-until`} type="date" value={endDate} min={isoDate(tomorrow)} onChange={(event) => setEndDate(event.target.value)} />
            <span className="field__hint">{t('actions.package.endsOnHint')}</span>
          </label>
        </>
      }
    >
      <p>
        {account.planPackageUntil ? (
          <Trans t={t} i18nKey="actions.package.bodyUntil" values={{ package: account.planPackage, time: format.dateTime(account.planPackageUntil) }} components={code} />
        ) : (
          <Trans t={t} i18nKey="actions.package.body" values={{ package: account.planPackage }} components={code} />
        )}
      </p>
    </ActionDialog>
  );
}

function RoleDialog({ account, onClose, onConfirm }: { account: StaffAccountFragment; onClose(): void; onConfirm(role: AccountRole, reason: string): Promise<void> }) {
  const { t } = useTranslation('staff');
  const id = useId();
  const [role, setRole] = useState<AccountRole>(account.role);
  return (
    <ActionDialog
      title={t('actions.roleDialog.title', { email: account.email })}
      confirmLabel={t('actions.changeRole')}
      reason="optional"
      onClose={onClose}
      onConfirm={(reason) => onConfirm(role, reason)}
      fields={
        <label className="field" htmlFor={`${id}-role`}>
          <span>{t('actions.roleDialog.field')}</span>
          <select id={`${id}-role`} value={role} onChange={(event) => setRole(event.target.value as AccountRole)}>
            {accountRoles.map((value) => (
              <option key={value} value={value}>
                {t(`role.${value}`)}
              </option>
            ))}
          </select>
        </label>
      }
    >
      <p>{t('actions.roleDialog.body')}</p>
    </ActionDialog>
  );
}

/** The `<input type="date">` value of a day in the reader's own time zone. */
function isoDate(date: Date): string {
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}
