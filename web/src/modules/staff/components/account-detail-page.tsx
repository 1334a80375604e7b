/**
 * `/admin/accounts/:id`: one account as support sees it — who it is, its plan and pools (drawn as on
 * `/account/usage`), its recent requests, keys and sessions, what staff did to it — and the actions.
 *
 * Organisations and orders have their sections here already; the enterprise and billing modules fill them
 * (see `AccountOrganisations` and `AccountOrders` below).
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { formatTime } from '../../account/components/format-time.ts';
import { CopyButton } from '../../account/components/copy-button.tsx';
import type { ApiKeyFragment } from '../../account/graphql/api-key.fragment.ts';
import type { SessionFragment } from '../../account/graphql/session.fragment.ts';
import { classLabels, modelClasses } from '../../plan/components/plan-labels.ts';
import { ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { PoolGauge } from '../../usage/components/pool-gauge.tsx';
import { UsageHistoryTable } from '../../usage/components/usage-history-table.tsx';
import '../../usage/components/usage.css';
import { ACCOUNT_AUDIT_QUERY } from '../graphql/account-audit.query.ts';
import { ACCOUNT_DETAIL_QUERY, type AccountDetail } from '../graphql/account-detail.query.ts';
import { STAFF_REVOKE_API_KEY } from '../graphql/staff-revoke-api-key.mutation.ts';
import { useStaffViewer } from '../hooks/use-staff-viewer.ts';
import { AccountActions, accountQueries } from './account-actions.tsx';
import { AccountStatus, PackageBadge, RoleBadge } from './account-badges.tsx';
import { ActionDialog } from './action-dialog.tsx';
import { AuditTable } from './audit-table.tsx';

export function AccountDetailPage() {
  const { id = '' } = useParams();
  const viewer = useStaffViewer();
  const { data, loading, error, refetch } = useQuery(ACCOUNT_DETAIL_QUERY, { variables: { id }, notifyOnNetworkStatusChange: true });
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => setNotice(null), [id]);
  const account = data?.account;
  return (
    <div className="admin-page">
      <title>{account ? `${account.email} · svc admin` : 'Account · svc admin'}</title>
      <p className="breadcrumb">
        <Link to="/admin/accounts">Accounts</Link> <span aria-hidden="true">/</span>
      </p>
      {error && !data ? (
        <ErrorState title="This account could not be loaded." error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label="Loading the account…" />
      ) : !account ? (
        <div className="state state--empty">
          <p className="state__title">There is no account with this id.</p>
          <p>
            <code>{id}</code> — check the link, or <Link to="/admin/accounts">search by email</Link>.
          </p>
        </div>
      ) : (
        <>
          <AccountHeader account={account} />
          <AccountActions
            account={account}
            sessionCount={account.sessions.length}
            viewerId={viewer.id}
            canManageStaff={viewer.viewerCanManageStaff}
            onDone={setNotice}
          />
          {notice && (
            <p className="notice" role="status">
              {notice}
              <button type="button" className="notice__close" onClick={() => setNotice(null)} aria-label="Dismiss">
                ×
              </button>
            </p>
          )}
          <Section title="Pools" note={`Package ${account.usage.packageId} · amounts in ${account.usage.currency} · windows follow ${account.usage.timezone} time`}>
            <div className="usage-classes usage-classes--compact">
              {modelClasses.map((cls) => (
                <section key={cls} className={`usage-class usage-class--${cls}`} aria-label={`${classLabels[cls]} pools`}>
                  <h3>{classLabels[cls]} models</h3>
                  <div className="gauges">
                    {account.usage.pools
                      .filter((pool) => pool.class === cls)
                      .map((pool) => (
                        <PoolGauge key={pool.window} pool={pool} timezone={account.usage.timezone} now={Date.now()} />
                      ))}
                  </div>
                </section>
              ))}
            </div>
          </Section>
          <Section title="Recent requests" note="Newest first, from the usage ledger.">
            {account.usageHistory.nodes.length === 0 ? (
              <Empty title="No requests yet." text="This account has not called the API." />
            ) : (
              <UsageHistoryTable nodes={account.usageHistory.nodes} />
            )}
          </Section>
          <div className="admin-columns">
            <Keys account={account} onDone={setNotice} />
            <Sessions sessions={account.sessions} />
          </div>
          <div className="admin-columns">
            <AccountOrganisations />
            <AccountOrders />
          </div>
          <AccountAudit accountId={account.id} />
        </>
      )}
    </div>
  );
}

function AccountHeader({ account }: { account: AccountDetail }) {
  return (
    <header className="account-header">
      <div className="account-header__title">
        <h1>{account.email}</h1>
        <div className="account-header__badges">
          <RoleBadge role={account.role} />
          <PackageBadge packageId={account.planPackage} until={account.planPackageUntil} />
          <AccountStatus account={account} />
        </div>
      </div>
      <dl className="facts">
        <div>
          <dt>Account id</dt>
          <dd>
            <code>{account.id}</code> <CopyButton value={account.id} label="Copy id" />
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{formatTime(account.createdAt)}</dd>
        </div>
        <div>
          <dt>Email</dt>
          <dd>{account.emailVerified ? 'Verified' : 'Not verified'}</dd>
        </div>
        <div>
          <dt>Signs in with</dt>
          <dd>{account.hasPassword ? 'Password or email code' : 'Email code or identity provider'}</dd>
        </div>
        {account.disabledAt && (
          <div>
            <dt>Disabled</dt>
            <dd>{formatTime(account.disabledAt)}</dd>
          </div>
        )}
        {account.displayName && (
          <div>
            <dt>Name</dt>
            <dd>{account.displayName}</dd>
          </div>
        )}
      </dl>
    </header>
  );
}

function Keys({ account, onDone }: { account: AccountDetail; onDone(message: string): void }) {
  const [revoking, setRevoking] = useState<ApiKeyFragment | null>(null);
  const [revoke] = useMutation(STAFF_REVOKE_API_KEY, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  return (
    <Section title="API keys" note="Live personal keys; only their first 12 and last 4 characters are kept.">
      {account.apiKeys.length === 0 ? (
        <Empty title="No live keys." text="Keys the owner creates at /account show up here." />
      ) : (
        <div className="table-scroll">
          <table className="admin-table admin-table--rows">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {account.apiKeys.map((key) => (
                <tr key={key.id}>
                  <td>
                    {key.name}
                    <span className="cell-note">created {formatTime(key.createdAt)}</span>
                  </td>
                  <td>
                    <code>
                      {key.prefix}…{key.last4}
                    </code>
                  </td>
                  <td className="nowrap">{formatTime(key.lastUsedAt)}</td>
                  <td className="admin-table__actions">
                    <button type="button" className="button button--small button--ghost-danger" onClick={() => setRevoking(key)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {revoking && (
        <ActionDialog
          title={`Revoke the key “${revoking.name}”?`}
          confirmLabel="Revoke key"
          danger
          reason="required"
          reasonPlaceholder="e.g. key posted in a public repository"
          onClose={() => setRevoking(null)}
          onConfirm={async (reason) => {
            await revoke({ variables: { id: revoking.id, reason } });
            setRevoking(null);
            onDone(`Key ${revoking.prefix}…${revoking.last4} revoked.`);
          }}
        >
          <p>
            <code>
              {revoking.prefix}…{revoking.last4}
            </code>{' '}
            stops working at once on every server; programs using it get 401. This cannot be undone: the owner makes a new key.
          </p>
        </ActionDialog>
      )}
    </Section>
  );
}

function Sessions({ sessions }: { sessions: SessionFragment[] }) {
  return (
    <Section title="Sessions" note="Browsers and command-line logins; end them all with the button above.">
      {sessions.length === 0 ? (
        <Empty title="No live sessions." text="Nobody is signed in to this account." />
      ) : (
        <div className="table-scroll">
          <table className="admin-table admin-table--rows">
            <thead>
              <tr>
                <th scope="col">Where</th>
                <th scope="col">Address</th>
                <th scope="col">Last used</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((session) => (
                <tr key={session.id}>
                  <td>
                    {session.kind === 'web' ? 'Browser' : `Device login${session.clientName ? ` · ${session.clientName}` : ''}`}
                    {session.userAgent && (
                      <span className="cell-note" title={session.userAgent}>
                        {session.userAgent.slice(0, 60)}
                      </span>
                    )}
                  </td>
                  <td>{session.ip ?? '—'}</td>
                  <td className="nowrap">
                    {formatTime(session.lastUsedAt)}
                    <span className="cell-note">since {formatTime(session.createdAt)}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}

/**
 * The organisations this account belongs to. The enterprise module replaces this body with its own
 * query (e.g. `account(id) { organisations { … } }` added to `Account` in its schema).
 */
function AccountOrganisations() {
  return (
    <Section title="Organisations">
      <Empty title="No organisations to show." text="Enterprise organisations this account belongs to will be listed here." />
    </Section>
  );
}

/** The account's orders. The billing module replaces this body with its own query. */
function AccountOrders() {
  return (
    <Section title="Orders">
      <Empty title="No orders to show." text="Orders and payments of this account will be listed here." />
    </Section>
  );
}

const auditPage = 20;

function AccountAudit({ accountId }: { accountId: string }) {
  const { data, loading, error, refetch, fetchMore } = useQuery(ACCOUNT_AUDIT_QUERY, { variables: { id: accountId, first: auditPage }, notifyOnNetworkStatusChange: true });
  const [loadingMore, setLoadingMore] = useState(false);
  const page = data?.account?.auditLog;
  const more = async () => {
    if (!page?.pageInfo.endCursor) return;
    setLoadingMore(true);
    try {
      await fetchMore({
        variables: { after: page.pageInfo.endCursor },
        updateQuery: (previous, { fetchMoreResult }) =>
          previous.account && fetchMoreResult.account
            ? { account: { ...previous.account, auditLog: { nodes: [...previous.account.auditLog.nodes, ...fetchMoreResult.account.auditLog.nodes], pageInfo: fetchMoreResult.account.auditLog.pageInfo } } }
            : previous,
      });
    } finally {
      setLoadingMore(false);
    }
  };
  return (
    <Section
      title="Audit log"
      note={
        <>
          What staff and the system did to this account and its keys, newest first. <Link to={`/admin/audit?targetType=account&targetId=${accountId}`}>Open in the audit log</Link>
        </>
      }
    >
      {error && !page ? (
        <ErrorState title="The audit entries could not be loaded." error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !page ? (
        <LoadingState label="Reading the audit log…" />
      ) : page.nodes.length === 0 ? (
        <Empty title="Nothing recorded." text="No staff action has touched this account yet." />
      ) : (
        <>
          <AuditTable entries={page.nodes} showTarget={false} />
          {page.pageInfo.hasNextPage && (
            <div className="actions">
              <button type="button" className="button button--ghost" onClick={() => void more()} disabled={loadingMore}>
                {loadingMore ? 'Loading…' : 'Show older entries'}
              </button>
            </div>
          )}
        </>
      )}
    </Section>
  );
}

function Section({ title, note, children }: { title: string; note?: ReactNode; children: ReactNode }) {
  return (
    <section className="admin-section" aria-label={title}>
      <div className="admin-section__head">
        <h2>{title}</h2>
        {note && <p className="muted">{note}</p>}
      </div>
      {children}
    </section>
  );
}

function Empty({ title, text }: { title: string; text: string }) {
  return (
    <div className="state state--empty state--compact">
      <p className="state__title">{title}</p>
      <p>{text}</p>
    </div>
  );
}
