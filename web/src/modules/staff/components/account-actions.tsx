/**
 * What support does to an account from its page: change its package (with a reason and an optional end),
 * disable or enable it, end every session; admins also change its role. Each opens a confirming dialog;
 * the page reloads the account and its audit entries afterwards.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState } from 'react';
import { formatTime } from '../../account/components/format-time.ts';
import { packageLabel } from '../../plan/components/plan-labels.ts';
import { PLANS_QUERY } from '../../plan/graphql/plans.query.ts';
import { DISABLE_ACCOUNT } from '../graphql/disable-account.mutation.ts';
import { ENABLE_ACCOUNT } from '../graphql/enable-account.mutation.ts';
import { END_SESSIONS } from '../graphql/end-sessions.mutation.ts';
import { SET_ACCOUNT_PACKAGE } from '../graphql/set-account-package.mutation.ts';
import { SET_ACCOUNT_ROLE } from '../graphql/set-account-role.mutation.ts';
import type { AccountRole, StaffAccountFragment } from '../graphql/staff-account.fragment.ts';
import { ActionDialog } from './action-dialog.tsx';
import { roleLabels } from './labels.ts';

type Open = 'package' | 'disable' | 'enable' | 'sessions' | 'role' | null;

/** Queries the account page shows, refreshed after every action. */
export const accountQueries = ['AccountDetail', 'AccountAudit'];

export interface AccountActionsProps {
  account: StaffAccountFragment;
  sessionCount: number;
  /** The signed-in staff member's own account id. */
  viewerId: string;
  canManageStaff: boolean;
  /** Says what happened, on the page (e.g. "Package changed to pro."). */
  onDone(message: string): void;
}

export function AccountActions({ account, sessionCount, viewerId, canManageStaff, onDone }: AccountActionsProps) {
  const [open, setOpen] = useState<Open>(null);
  const close = () => setOpen(null);
  const done = (message: string) => {
    setOpen(null);
    onDone(message);
  };
  const [setPackage] = useMutation(SET_ACCOUNT_PACKAGE, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  const [disable] = useMutation(DISABLE_ACCOUNT, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  const [enable] = useMutation(ENABLE_ACCOUNT, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  const [endSessions] = useMutation(END_SESSIONS, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  const [setRole] = useMutation(SET_ACCOUNT_ROLE, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  // The same rules the server applies (it refuses anyway): say so instead of offering buttons that fail.
  if (account.id === viewerId) {
    return <p className="account-actions account-actions--note muted">This is your own account: another staff member changes its package, status or role.</p>;
  }
  if (account.role !== 'member' && !canManageStaff) {
    return <p className="account-actions account-actions--note muted">This is a staff account: only an admin can act on it.</p>;
  }
  return (
    <div className="account-actions" role="toolbar" aria-label="Account actions">
      <button type="button" className="button button--ghost" onClick={() => setOpen('package')}>
        Change package
      </button>
      {account.disabled ? (
        <button type="button" className="button button--ghost" onClick={() => setOpen('enable')}>
          Enable account
        </button>
      ) : (
        <button type="button" className="button button--ghost button--ghost-danger" onClick={() => setOpen('disable')}>
          Disable account
        </button>
      )}
      <button type="button" className="button button--ghost" onClick={() => setOpen('sessions')} disabled={sessionCount === 0} title={sessionCount === 0 ? 'No live sessions' : undefined}>
        End all sessions
      </button>
      {canManageStaff && (
        <button type="button" className="button button--ghost" onClick={() => setOpen('role')}>
          Change role
        </button>
      )}

      {open === 'package' && (
        <PackageDialog
          account={account}
          onClose={close}
          onConfirm={async (packageId, until, reason) => {
            await setPackage({ variables: { accountId: account.id, packageId, reason, until } });
            done(until ? `Package changed to ${packageId} until ${formatTime(until)}.` : `Package changed to ${packageId}.`);
          }}
        />
      )}
      {open === 'disable' && (
        <ActionDialog
          title={`Disable ${account.email}?`}
          confirmLabel="Disable account"
          danger
          reason="required"
          reasonPlaceholder="e.g. chargeback, abuse report #1234"
          onClose={close}
          onConfirm={async (reason) => {
            await disable({ variables: { id: account.id, reason } });
            done('Account disabled. Its keys, sessions and sign-ins are refused until it is enabled.');
          }}
        >
          <p>
            Every credential of this account is refused at once on every server: API keys, device logins and the browser.{' '}
            {sessionCount === 0 ? 'It has no live sessions.' : sessionCount === 1 ? 'Its one live session ends now.' : `Its ${sessionCount} live sessions end now.`} Its keys
            are kept and work again if you enable it.
          </p>
        </ActionDialog>
      )}
      {open === 'enable' && (
        <ActionDialog
          title={`Enable ${account.email}?`}
          confirmLabel="Enable account"
          reason="optional"
          onClose={close}
          onConfirm={async (reason) => {
            await enable({ variables: { id: account.id, reason: reason || null } });
            done('Account enabled. Its API keys work again and its owner can sign in.');
          }}
        >
          <p>Its API keys work again and its owner can sign in. Sessions ended while it was disabled stay ended.</p>
        </ActionDialog>
      )}
      {open === 'sessions' && (
        <ActionDialog
          title={`End every session of ${account.email}?`}
          confirmLabel={sessionCount === 1 ? 'End 1 session' : `End ${sessionCount} sessions`}
          danger
          reason="required"
          reasonPlaceholder="e.g. owner reported a stolen laptop"
          onClose={close}
          onConfirm={async (reason) => {
            const result = await endSessions({ variables: { accountId: account.id, reason } });
            const ended = result.data?.endSessions ?? 0;
            done(ended === 1 ? 'One session ended.' : `${ended} sessions ended.`);
          }}
        >
          <p>Browsers and command-line logins are signed out at once, on every server. API keys keep working; revoke them below if they leaked.</p>
        </ActionDialog>
      )}
      {open === 'role' && (
        <RoleDialog
          account={account}
          onClose={close}
          onConfirm={async (role, reason) => {
            await setRole({ variables: { accountId: account.id, role, reason: reason || null } });
            done(`Role changed to ${roleLabels[role]}.`);
          }}
        />
      )}
    </div>
  );
}

function PackageDialog({ account, onClose, onConfirm }: { account: StaffAccountFragment; onClose(): void; onConfirm(packageId: string, until: string | null, reason: string): Promise<void> }) {
  const id = useId();
  const plans = useQuery(PLANS_QUERY);
  const [packageId, setPackageId] = useState(account.planPackage);
  const [endDate, setEndDate] = useState('');
  const options = plans.data?.plans.flatMap((plan) => plan.packages.map((pkg) => ({ id: pkg.id, label: `${packageLabel(plan, pkg)} (${pkg.id})` }))) ?? [];
  if (!options.some((option) => option.id === account.planPackage)) options.unshift({ id: account.planPackage, label: account.planPackage });
  const today = new Date();
  const tomorrow = new Date(today.getFullYear(), today.getMonth(), today.getDate() + 1);
  return (
    <ActionDialog
      title={`Change the package of ${account.email}`}
      confirmLabel="Change package"
      reason="required"
      reasonPlaceholder="e.g. goodwill after the 12 Nov outage"
      onClose={onClose}
      onConfirm={(reason) => onConfirm(packageId, endDate ? new Date(`${endDate}T00:00:00`).toISOString() : null, reason)}
      fields={
        <>
          <label className="field" htmlFor={`${id}-package`}>
            <span>Package</span>
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
              Ends on <span className="muted">(optional)</span>
            </span>
            <input id={`${id}-until`} type="date" value={endDate} min={isoDate(tomorrow)} onChange={(event) => setEndDate(event.target.value)} />
            <span className="field__hint">The account returns to Free at the start of this day (your time). Leave empty for no end.</span>
          </label>
        </>
      }
    >
      <p>
        Now on <code>{account.planPackage}</code>
        {account.planPackageUntil ? ` until ${formatTime(account.planPackageUntil)}` : ''}. Pools, models and rate limits follow the new package at once, on every
        server. No payment is taken or refunded.
      </p>
    </ActionDialog>
  );
}

function RoleDialog({ account, onClose, onConfirm }: { account: StaffAccountFragment; onClose(): void; onConfirm(role: AccountRole, reason: string): Promise<void> }) {
  const id = useId();
  const [role, setRole] = useState<AccountRole>(account.role);
  return (
    <ActionDialog
      title={`Change the role of ${account.email}`}
      confirmLabel="Change role"
      reason="optional"
      onClose={onClose}
      onConfirm={(reason) => onConfirm(role, reason)}
      fields={
        <label className="field" htmlFor={`${id}-role`}>
          <span>Role</span>
          <select id={`${id}-role`} value={role} onChange={(event) => setRole(event.target.value as AccountRole)}>
            {(Object.keys(roleLabels) as AccountRole[]).map((value) => (
              <option key={value} value={value}>
                {roleLabels[value]}
              </option>
            ))}
          </select>
        </label>
      }
    >
      <p>Support staff look accounts up and act on members; admins can also change roles and act on staff accounts. The new role applies to the account's next request.</p>
    </ActionDialog>
  );
}

function isoDate(date: Date): string {
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}
