/**
 * `/admin/accounts/:id`: one account as support sees it — who it is, its plan and pools (drawn as on
 * `/account/usage`), its recent requests, keys and sessions, what staff did to it — and the actions.
 *
 * Orders have their section here already; the billing module fills it (see `AccountOrders` below).
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useEffect, useState, type ReactNode } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { CopyButton } from '../../account/components/copy-button.tsx';
import type { ApiKeyFragment } from '../../account/graphql/api-key.fragment.ts';
import type { SessionFragment } from '../../account/graphql/session.fragment.ts';
import { modelClasses, usePlanText } from '../../plan/components/plan-labels.ts';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { PoolGauge } from '../../usage/components/pool-gauge.tsx';
import { UsageHistoryTable } from '../../usage/components/usage-history-table.tsx';
import '../../usage/components/usage.css';
import { OrdersTable } from '../../billing/components/billing-page.tsx';
import { ACCOUNT_AUDIT_QUERY } from '../graphql/account-audit.query.ts';
import { ACCOUNT_ORGANISATIONS_QUERY } from '../graphql/account-organisations.query.ts';
import { STAFF_ORDERS_QUERY } from '../graphql/staff-orders.query.ts';
import { ACCOUNT_DETAIL_QUERY, type AccountDetail } from '../graphql/account-detail.query.ts';
import { STAFF_REVOKE_API_KEY } from '../graphql/staff-revoke-api-key.mutation.ts';
import { useStaffViewer } from '../hooks/use-staff-viewer.ts';
import { appendPage, useLoadMore } from '../hooks/use-load-more.ts';
import { AccountActions, accountQueries, NoticeText, type Notice } from './account-actions.tsx';
import { AccountStatus, PackageBadge, RoleBadge } from './account-badges.tsx';
import { ActionDialog } from './action-dialog.tsx';
import { AuditTable } from './audit-table.tsx';
import { OrganisationBadge, OrganisationPanel } from './organisation-panel.tsx';
import { MoreButton } from './search-bar.tsx';
import { AdminSection } from './admin-section.tsx';

/** How many of the account's latest requests the page shows. */
const recentRequests = 15;

export function AccountDetailPage() {
  const { t } = useTranslation(['staff', 'usage']);
  const plan = usePlanText();
  const { id = '' } = useParams();
  const viewer = useStaffViewer();
  const { data, loading, error, refetch } = useQuery(ACCOUNT_DETAIL_QUERY, { variables: { id, requests: recentRequests }, notifyOnNetworkStatusChange: true });
  const [notice, setNotice] = useState<Notice | null>(null);
  useEffect(() => setNotice(null), [id]);
  const account = data?.account;
  return (
    <div className="admin-page">
      <title>{t('pageTitle', { page: account ? (account.kind === 'organisation' && account.displayName ? account.displayName : account.email) : t('account.title') })}</title>
      <p className="breadcrumb">
        <Link to="/admin/accounts">{t('accounts.title')}</Link> <span aria-hidden="true">/</span>
      </p>
      {error && !data ? (
        <ErrorState title={t('account.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label={t('account.loading')} />
      ) : !account ? (
        <EmptyState title={t('account.notFound')}>
          <p>
            <Trans t={t} i18nKey="account.notFoundHint" values={{ id }} components={{ code: <code />, search: <Link to="/admin/accounts" /> }} />
          </p>
        </EmptyState>
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
              <span>
                <NoticeText notice={notice} />
              </span>
              <button type="button" className="notice__close" onClick={() => setNotice(null)} aria-label={t('account.dismiss')}>
                ×
              </button>
            </p>
          )}
          <AdminSection
            title={t('account.pools.heading')}
            note={
              <Trans
                t={t}
                i18nKey="account.pools.note"
                values={{ package: account.usage.packageId, currency: account.usage.currency, timezone: account.usage.timezone }}
                components={{ code: <code /> }}
              />
            }
          >
            <div className="usage-classes usage-classes--compact">
              {modelClasses.map((cls) => (
                <section key={cls} className={`usage-class usage-class--${cls}`} aria-label={t('usage:pools.classLabel', { class: plan.className(cls) })}>
                  <h3>{t('usage:pools.classModels', { class: plan.className(cls) })}</h3>
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
          </AdminSection>
          <AdminSection title={t('account.requests.heading')} note={t('account.requests.note')}>
            {account.usageHistory.nodes.length === 0 ? (
              <Empty title={t('account.requests.empty')} text={t('account.requests.emptyHint')} />
            ) : (
              <UsageHistoryTable nodes={account.usageHistory.nodes} requestHref={(requestId) => `/admin/requests/${encodeURIComponent(requestId)}`} />
            )}
          </AdminSection>
          {account.kind === 'organisation' ? (
            <OrganisationPanel organisationId={account.id} />
          ) : (
            <div className="admin-columns">
              <Keys account={account} onDone={setNotice} />
              <Sessions sessions={account.sessions} />
            </div>
          )}
          <div className="admin-columns">
            {account.kind === 'person' && <AccountOrganisations accountId={account.id} />}
            <AccountOrders accountId={account.id} />
          </div>
          <AccountAudit accountId={account.id} />
        </>
      )}
    </div>
  );
}

function AccountHeader({ account }: { account: AccountDetail }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  // An organisation never signs in: its name says more than its placeholder address.
  const organisation = account.kind === 'organisation';
  return (
    <header className="account-header">
      <div className="account-header__title">
        <h1>{organisation && account.displayName ? account.displayName : account.email}</h1>
        <div className="account-header__badges">
          {account.kind === 'organisation' ? <OrganisationBadge /> : <RoleBadge role={account.role} />}
          <PackageBadge packageId={account.planPackage} until={account.planPackageUntil} />
          <AccountStatus account={account} />
        </div>
      </div>
      <dl className="facts">
        <div>
          <dt>{t('account.facts.id')}</dt>
          <dd>
            <code>{account.id}</code> <CopyButton value={account.id} label={t('account.facts.copyId')} />
          </dd>
        </div>
        <div>
          <dt>{t('account.facts.created')}</dt>
          <dd>{format.dateTime(account.createdAt)}</dd>
        </div>
        {!organisation && (
          <div>
            <dt>{t('account.facts.email')}</dt>
            <dd>{account.emailVerified ? t('account.facts.verified') : t('account.facts.notVerified')}</dd>
          </div>
        )}
        {!organisation && (
          <div>
            <dt>{t('account.facts.signsInWith')}</dt>
            <dd>{account.hasPassword ? t('account.facts.passwordOrCode') : t('account.facts.codeOrProvider')}</dd>
          </div>
        )}
        {account.disabledAt && (
          <div>
            <dt>{t('account.facts.disabled')}</dt>
            <dd>{format.dateTime(account.disabledAt)}</dd>
          </div>
        )}
        {account.displayName && !organisation && (
          <div>
            <dt>{t('account.facts.name')}</dt>
            <dd>{account.displayName}</dd>
          </div>
        )}
      </dl>
    </header>
  );
}

function Keys({ account, onDone }: { account: AccountDetail; onDone(notice: Notice): void }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  const [revoking, setRevoking] = useState<ApiKeyFragment | null>(null);
  const [revoke] = useMutation(STAFF_REVOKE_API_KEY, { refetchQueries: accountQueries, awaitRefetchQueries: true });
  const shown = (key: ApiKeyFragment) => `${key.prefix}…${key.last4}`;
  return (
    <AdminSection title={t('account.keys.heading')} note={t('account.keys.note')}>
      {account.apiKeys.length === 0 ? (
        <Empty title={t('account.keys.empty')} text={<Trans t={t} i18nKey="account.keys.emptyHint" components={{ code: <code /> }} />} />
      ) : (
        <div className="table-scroll">
          <table className="admin-table admin-table--rows">
            <thead>
              <tr>
                <th scope="col">{t('account.keys.columns.name')}</th>
                <th scope="col">{t('account.keys.columns.key')}</th>
                <th scope="col">{t('account.keys.columns.lastUsed')}</th>
                <th scope="col">
                  <span className="visually-hidden">{t('account.keys.columns.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {account.apiKeys.map((key) => (
                <tr key={key.id}>
                  <td>
                    {key.name}
                    <span className="cell-note">{t('account.keys.created', { time: format.dateTime(key.createdAt) })}</span>
                  </td>
                  <td>
                    <code>{shown(key)}</code>
                  </td>
                  {/* May wrap at its spaces: kept on one line, a long date pushes the revoke button out of the column. */}
                  <td>{key.lastUsedAt ? format.dateTime(key.lastUsedAt) : t('never')}</td>
                  <td className="admin-table__actions">
                    <button type="button" className="button button--small button--ghost-danger" onClick={() => setRevoking(key)}>
                      {t('account.keys.revoke')}
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
          title={t('account.keys.dialog.title', { name: revoking.name })}
          confirmLabel={t('account.keys.dialog.confirm')}
          danger
          reason="required"
          reasonPlaceholder={t('account.keys.dialog.placeholder')}
          onClose={() => setRevoking(null)}
          onConfirm={async (reason) => {
            await revoke({ variables: { id: revoking.id, reason } });
            setRevoking(null);
            onDone({ kind: 'keyRevoked', key: shown(revoking) });
          }}
        >
          <p>
            <Trans t={t} i18nKey="account.keys.dialog.body" values={{ key: shown(revoking) }} components={{ code: <code /> }} />
          </p>
        </ActionDialog>
      )}
    </AdminSection>
  );
}

function Sessions({ sessions }: { sessions: SessionFragment[] }) {
  const { t } = useTranslation('staff');
  const format = useFormat();
  return (
    <AdminSection title={t('account.sessions.heading')} note={t('account.sessions.note')}>
      {sessions.length === 0 ? (
        <Empty title={t('account.sessions.empty')} text={t('account.sessions.emptyHint')} />
      ) : (
        <div className="table-scroll">
          <table className="admin-table admin-table--rows">
            <thead>
              <tr>
                <th scope="col">{t('account.sessions.columns.where')}</th>
                <th scope="col">{t('account.sessions.columns.address')}</th>
                <th scope="col">{t('account.sessions.columns.lastUsed')}</th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((session) => (
                <tr key={session.id}>
                  <td>
                    {t(`account.sessions.kind.${session.kind}`)}
                    {session.kind !== 'web' && session.clientName && (
                      <>
                        {' · '}
                        <code>{session.clientName}</code>
                      </>
                    )}
                    {/* The user agent is the client's own string: shown as written, in either language. */}
                    {session.userAgent && (
                      <code className="cell-note" title={session.userAgent}>
                        {session.userAgent.slice(0, 60)}
                      </code>
                    )}
                  </td>
                  <td>{session.ip ?? '—'}</td>
                  <td className="nowrap">
                    {format.dateTime(session.lastUsedAt)}
                    <span className="cell-note">{t('account.sessions.since', { time: format.dateTime(session.createdAt) })}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </AdminSection>
  );
}

/** The organisations this account belongs to, its role in each, and the package each is on. */
function AccountOrganisations({ accountId }: { accountId: string }) {
  const { t } = useTranslation(['staff', 'enterprise']);
  const format = useFormat();
  const { data, loading, error, refetch } = useQuery(ACCOUNT_ORGANISATIONS_QUERY, { variables: { id: accountId }, notifyOnNetworkStatusChange: true });
  const organisations = data?.account?.organisations;
  return (
    <AdminSection title={t('account.organisations.heading')}>
      {error && !organisations ? (
        <ErrorState title={t('enterprise:review.organisations.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !organisations ? (
        <LoadingState label={t('enterprise:review.organisations.loading')} />
      ) : organisations.length === 0 ? (
        <Empty title={t('account.organisations.empty')} text={t('account.organisations.emptyHint')} />
      ) : (
        <div className="table-scroll">
          <table className="admin-table admin-table--rows">
            <thead>
              <tr>
                <th scope="col">{t('enterprise:review.organisations.name')}</th>
                <th scope="col">{t('enterprise:review.organisations.role')}</th>
                <th scope="col">{t('enterprise:review.organisations.package')}</th>
              </tr>
            </thead>
            <tbody>
              {organisations.map((organisation) => (
                <tr key={organisation.id}>
                  <td>
                    <Link to={`/admin/accounts/${organisation.id}`}>{organisation.name}</Link>
                    <span className="cell-note">{t('enterprise:review.organisations.since', { time: format.dateTime(organisation.createdAt) })}</span>
                  </td>
                  <td>{organisation.viewerRole ? t(`enterprise:role.${organisation.viewerRole}`) : '—'}</td>
                  <td>
                    <code>{organisation.packageId}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </AdminSection>
  );
}

/** The account's orders. The billing module replaces this body with its own query. */
function AccountOrders({ accountId }: { accountId: string }) {
  const { t } = useTranslation('staff');
  const { data, loading, error, refetch } = useQuery(STAFF_ORDERS_QUERY, { variables: { accountId, first: 20 }, notifyOnNetworkStatusChange: true });
  return (
    <AdminSection title={t('account.orders.heading')}>
      {error && !data ? (
        <ErrorState title={t('account.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label={t('account.loading')} />
      ) : data.staffOrders.length === 0 ? (
        <Empty title={t('account.orders.empty')} text={t('account.orders.emptyHint')} />
      ) : (
        <OrdersTable orders={data.staffOrders} link={(order) => `/admin/orders/${order.id}`} staff />
      )}
    </AdminSection>
  );
}

const auditPage = 20;

function AccountAudit({ accountId }: { accountId: string }) {
  const { t } = useTranslation('staff');
  const { data, loading, error, refetch, fetchMore } = useQuery(ACCOUNT_AUDIT_QUERY, { variables: { id: accountId, first: auditPage }, notifyOnNetworkStatusChange: true });
  const page = data?.account?.auditLog;
  const [loadingMore, more] = useLoadMore(page?.pageInfo.endCursor, (after) =>
    fetchMore({
      variables: { after },
      updateQuery: (previous, { fetchMoreResult }) =>
        previous.account && fetchMoreResult.account
          ? { account: { ...previous.account, auditLog: appendPage(previous.account.auditLog, fetchMoreResult.account.auditLog) } }
          : previous,
    }),
  );
  return (
    <AdminSection
      title={t('account.audit.heading')}
      note={<Trans t={t} i18nKey="account.audit.note" components={{ log: <Link to={`/admin/audit?targetType=account&targetId=${accountId}`} /> }} />}
    >
      {error && !page ? (
        <ErrorState title={t('account.audit.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !page ? (
        <LoadingState label={t('account.audit.loading')} />
      ) : page.nodes.length === 0 ? (
        <Empty title={t('account.audit.empty')} text={t('account.audit.emptyHint')} />
      ) : (
        <>
          <AuditTable entries={page.nodes} showTarget={false} />
          {page.pageInfo.hasNextPage && (
            <MoreButton onMore={() => void more()} loadingMore={loadingMore} label={t('account.audit.older')} loadingLabel={t('loadingMore')} />
          )}
        </>
      )}
    </AdminSection>
  );
}

function Empty({ title, text }: { title: string; text: ReactNode }) {
  return (
    <EmptyState title={title} compact>
      <p>{text}</p>
    </EmptyState>
  );
}
