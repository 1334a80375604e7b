/**
 * `/admin/orders` (and `/admin/orders/:id`): find an order by its number or by the provider's trade
 * number, see whose it is and what happened to it (the audit entries), ask the provider about it again,
 * and — admins — refund it with a reason. The server checks every right again.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { useBillingText } from '../../billing/components/labels.ts';
import { minorAmount } from '../../billing/components/minor.ts';
import { StateBadge } from '../../billing/components/state-badge.tsx';
import '../../billing/components/billing.css';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import { EmptyState, ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { AUDIT_LOG_QUERY } from '../graphql/audit-log.query.ts';
import { ORDER_ACCOUNT_QUERY } from '../graphql/order-account.query.ts';
import { REFUND_ORDER } from '../graphql/refund-order.mutation.ts';
import { REQUERY_ORDER } from '../graphql/requery-order.mutation.ts';
import type { PaymentNoticeFragment, StaffOrderFragment } from '../graphql/staff-order.fragment.ts';
import { STAFF_ORDER_QUERY } from '../graphql/staff-order.query.ts';
import { STAFF_ORDERS_QUERY, type StaffOrderListItem } from '../graphql/staff-orders.query.ts';
import { useStaffViewer } from '../hooks/use-staff-viewer.ts';
import { ActionDialog } from './action-dialog.tsx';
import { AuditTable } from './audit-table.tsx';
import { SearchBar } from './search-bar.tsx';

export function OrdersPage() {
  const { t } = useTranslation(['billing', 'staff']);
  const navigate = useNavigate();
  const { id: routeId } = useParams();
  const [params] = useSearchParams();
  const lookup = (routeId ?? params.get('q') ?? '').trim();
  return (
    <div className="admin-page">
      <title>{t('staff:pageTitle', { page: t('admin.title') })}</title>
      <header className="admin-head">
        <div>
          <h1>{t('admin.title')}</h1>
          <p className="muted admin-head__note">{t('admin.note')}</p>
        </div>
      </header>
      <SearchBar
        value={lookup}
        onSearch={(q) => void navigate(q ? `/admin/orders?q=${encodeURIComponent(q)}` : '/admin/orders')}
        label={t('admin.searchLabel')}
        placeholder={t('admin.searchPlaceholder')}
        submitLabel={t('admin.search')}
        maxLength={255}
      />
      {lookup ? (
        <OrderLookup key={lookup} lookup={lookup} />
      ) : (
        <RecentOrders />
      )}
    </div>
  );
}

function OrderLookup({ lookup }: { lookup: string }) {
  const { t } = useTranslation('billing');
  const { data, loading, error, refetch } = useQuery(STAFF_ORDER_QUERY, { variables: { key: lookup }, notifyOnNetworkStatusChange: true });
  if (error && !data) return <ErrorState title={t('admin.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data) return <LoadingState label={t('admin.loading')} />;
  const order = data.staffOrder;
  if (!order) {
    return (
      <EmptyState title={t('admin.notFound')}>
        <p>
          <Trans t={t} i18nKey="admin.notFoundHint" values={{ lookup }} components={{ code: <code /> }} />
        </p>
      </EmptyState>
    );
  }
  return <OrderDetail order={order} />;
}

type Notice = { kind: 'requeried'; result: string; detail: string | null; state: string } | { kind: 'refund'; state: string };

/** Orders an admin may refund: paid, or paid and a refund the provider gave up. */
const refundable = ['paid', 'refund_failed'];

function OrderDetail({ order }: { order: StaffOrderFragment }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const text = useBillingText();
  const packageName = usePackageName();
  const viewer = useStaffViewer();
  const [requery, requeryState] = useMutation(REQUERY_ORDER);
  const [refund] = useMutation(REFUND_ORDER);
  const [refunding, setRefunding] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const [problem, setProblem] = useState<unknown>(null);
  const audit = useQuery(AUDIT_LOG_QUERY, { variables: { filter: { targetType: 'order', targetId: order.id }, first: 50 }, notifyOnNetworkStatusChange: true });
  const owner = useQuery(ORDER_ACCOUNT_QUERY, { variables: { id: order.accountId } });
  const email = owner.data?.account?.email ?? order.accountId;
  const money = (amount: string) => format.money({ amount, currency: order.currency });
  const minor = (value: number) => money(minorAmount(value, order.currency));
  const canRefund = viewer.role === 'admin' && refundable.includes(order.state);

  const askProvider = async () => {
    setProblem(null);
    setNotice(null);
    try {
      const { data } = await requery({ variables: { id: order.id } });
      if (data) setNotice({ kind: 'requeried', result: data.requeryOrder.result, detail: data.requeryOrder.detail, state: data.requeryOrder.order.state });
      void audit.refetch().catch(() => undefined);
    } catch (caught) {
      setProblem(caught);
    }
  };

  return (
    <>
      <header className="account-header" data-order={order.id}>
        <div className="account-header__title">
          <h2 className="order-title">
            <code>{order.id}</code>
          </h2>
          <div className="account-header__badges">
            <StateBadge state={order.state} />
          </div>
        </div>
        <dl className="facts">
          <Fact label={t('admin.facts.account')}>
            <Link to={`/admin/accounts/${order.accountId}`}>{email}</Link>
          </Fact>
          <Fact label={t('admin.facts.package')}>{packageName(order.packageId)}</Fact>
          <Fact label={t('admin.facts.amount')}>
            <strong data-testid="order-amount">{money(order.amount)}</strong>
          </Fact>
          {order.creditMinor > 0 && (
            <Fact label={t('admin.facts.listAndCredit')}>{t('admin.facts.listAndCreditValue', { list: minor(order.listMinor), credit: minor(order.creditMinor) })}</Fact>
          )}
          <Fact label={t('admin.facts.provider')}>{text.providerName(order.provider)}</Fact>
          <Fact label={t('admin.facts.tradeNo')}>{order.providerTradeNo ? <code>{order.providerTradeNo}</code> : <span className="muted">{t('admin.none')}</span>}</Fact>
          <Fact label={t('admin.facts.created')}>{format.dateTime(order.createdAt)}</Fact>
          {order.state === 'created' && <Fact label={t('admin.facts.expires')}>{format.dateTime(order.expiresAt)}</Fact>}
          {order.paidAt && <Fact label={t('admin.facts.paid')}>{format.dateTime(order.paidAt)}</Fact>}
          {order.closedAt && <Fact label={t('admin.facts.closed')}>{format.dateTime(order.closedAt)}</Fact>}
          {order.refundRequestedAt && !order.refundedAt && <Fact label={t('admin.facts.refundRequested')}>{format.dateTime(order.refundRequestedAt)}</Fact>}
          {order.refundedAt && <Fact label={t('admin.facts.refunded')}>{format.dateTime(order.refundedAt)}</Fact>}
          {order.refundReason && <Fact label={t('admin.facts.refundReason')}>{order.refundReason}</Fact>}
        </dl>
      </header>
      <RefundState order={order} />
      <div className="account-actions">
        <button type="button" className="button button--ghost" onClick={() => void askProvider()} disabled={requeryState.loading}>
          {requeryState.loading ? t('admin.requerying') : t('admin.requery')}
        </button>
        {canRefund && (
          <button type="button" className="button button--danger" onClick={() => setRefunding(true)}>
            {order.state === 'refund_failed' ? t('admin.refundAgain') : t('admin.refund')}
          </button>
        )}
        {viewer.role !== 'admin' && refundable.includes(order.state) && <span className="muted account-actions--note">{t('admin.refundAdminOnly')}</span>}
      </div>
      <ProblemLine error={problem} />
      {notice && (
        <p className="notice" role="status">
          <span>
            {notice.kind === 'refund' ? <RefundText state={notice.state} amount={money(order.amount)} /> : <RequeryText notice={notice} />}
          </span>
          <button type="button" className="notice__close" onClick={() => setNotice(null)} aria-label={t('admin.dismiss')}>
            ×
          </button>
        </p>
      )}
      {refunding && (
        <ActionDialog
          title={t('admin.refundTitle', { amount: money(order.amount) })}
          confirmLabel={t('admin.refundConfirm')}
          danger
          reason="required"
          onClose={() => setRefunding(false)}
          onConfirm={async (reason) => {
            const { data } = await refund({ variables: { id: order.id, reason } });
            setRefunding(false);
            setNotice({ kind: 'refund', state: data?.refundOrder.state ?? order.state });
            void audit.refetch().catch(() => undefined);
          }}
        >
          <p>{t('admin.refundBody', { amount: money(order.amount), provider: text.providerName(order.provider), email })}</p>
        </ActionDialog>
      )}
      <section className="admin-section">
        <h2>{t('admin.notices.heading')}</h2>
        <p className="muted admin-head__note">{t('admin.notices.note')}</p>
        {order.notices.length === 0 ? (
          <EmptyState title={t('admin.notices.empty')} compact />
        ) : (
          <NoticesTable notices={order.notices} />
        )}
      </section>
      <section className="admin-section">
        <h2>{t('admin.audit.heading')}</h2>
        {audit.error && !audit.data ? (
          <ErrorState title={t('admin.audit.loadError')} error={audit.error} onRetry={() => void audit.refetch().catch(() => undefined)} retrying={audit.loading} />
        ) : !audit.data ? (
          <LoadingState label={t('admin.audit.loading')} />
        ) : audit.data.auditLog.nodes.length === 0 ? (
          <EmptyState title={t('admin.audit.empty')} compact />
        ) : (
          <AuditTable entries={audit.data.auditLog.nodes} showTarget={false} />
        )}
      </section>
    </>
  );
}

/** A refund on its way, or one the provider gave up: what it means and what staff can do. */
function RefundState({ order }: { order: StaffOrderFragment }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  if (order.state === 'refund_pending') {
    return (
      <p className="notice notice--pending" role="status" data-testid="refund-state">
        {t('admin.refundPendingNote', { time: format.dateTime(order.refundRequestedAt ?? order.createdAt) })}
      </p>
    );
  }
  if (order.state === 'refund_failed') {
    return (
      <p className="notice notice--danger" role="alert" data-testid="refund-state">
        {t('admin.refundFailedNote', { failure: order.refundFailure ?? '-' })}
      </p>
    );
  }
  return null;
}

/** What the provider made of the refund just asked for. */
function RefundText({ state, amount }: { state: string; amount: string }) {
  const { t } = useTranslation('billing');
  if (state === 'refund_pending') return <>{t('admin.refundPendingNotice', { amount })}</>;
  if (state === 'refund_failed') return <>{t('admin.refundFailedNotice', { amount })}</>;
  return <>{t('admin.refundedNotice', { amount })}</>;
}

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

const requeryResults = ['paid', 'failed', 'expired', 'pending', 'refunded', 'refund_failed', 'unchanged', 'skipped', 'error'] as const;

function RequeryText({ notice }: { notice: { result: string; detail: string | null; state: string } }) {
  const { t } = useTranslation('billing');
  const text = useBillingText();
  const result = (requeryResults as readonly string[]).includes(notice.result) ? (notice.result as (typeof requeryResults)[number]) : 'unchanged';
  return (
    <>
      {t(`admin.requeryResult.${result}`, { state: text.stateLabel(notice.state) })}
      {notice.detail && (
        <>
          {' '}
          <code>{notice.detail}</code>
        </>
      )}
    </>
  );
}

/** The evidence: every notification or provider answer stored for the order, oldest first. */
function NoticesTable({ notices }: { notices: PaymentNoticeFragment[] }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const text = useBillingText();
  return (
    <div className="table-scroll">
      <table className="admin-table admin-table--rows notices-table">
        <thead>
          <tr>
            <th scope="col">{t('admin.notices.columns.when')}</th>
            <th scope="col">{t('admin.notices.columns.source')}</th>
            <th scope="col">{t('admin.notices.columns.verified')}</th>
            <th scope="col">{t('admin.notices.columns.outcome')}</th>
            <th scope="col">{t('admin.notices.columns.said')}</th>
          </tr>
        </thead>
        <tbody>
          {notices.map((notice) => (
            <tr key={notice.id} data-outcome={notice.outcome}>
              <td className="nowrap">{format.dateTime(notice.createdAt)}</td>
              <td>
                {text.providerName(notice.provider)} <span className="muted">{notice.source === 'query' ? t('admin.notices.query') : t('admin.notices.notify')}</span>
              </td>
              <td>{notice.verified ? t('admin.notices.yes') : <strong className="form__error">{t('admin.notices.no')}</strong>}</td>
              <td>
                <code>{notice.outcome}</code>
                {notice.reason && (
                  <>
                    {' '}
                    <code className="muted">{notice.reason}</code>
                  </>
                )}
                {notice.detail && <div className="cell-note">{notice.detail}</div>}
              </td>
              <td>
                {notice.status && <code>{notice.status}</code>}
                {notice.amountMinor !== null && notice.currency && <span> {format.money({ amount: minorAmount(notice.amountMinor, notice.currency), currency: notice.currency })}</span>}
                {notice.providerTradeNo && <div className="cell-note"><code>{notice.providerTradeNo}</code></div>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** With nothing looked up: the newest orders of everyone. */
function RecentOrders() {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const text = useBillingText();
  const packageName = usePackageName();
  const { data, loading, error, refetch } = useQuery(STAFF_ORDERS_QUERY, { variables: { first: 25 }, notifyOnNetworkStatusChange: true });
  if (error && !data) return <ErrorState title={t('admin.recent.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data) return <LoadingState label={t('admin.recent.loading')} />;
  if (data.staffOrders.length === 0) {
    return (
      <EmptyState title={t('admin.recent.empty')}>
        <p>{t('admin.startHint')}</p>
      </EmptyState>
    );
  }
  return (
    <section className="admin-section">
      <h2>{t('admin.recent.heading')}</h2>
      <div className="table-scroll">
        <table className="admin-table admin-table--rows stacked-table">
          <thead>
            <tr>
              <th scope="col">{t('admin.recent.columns.order')}</th>
              <th scope="col">{t('admin.recent.columns.created')}</th>
              <th scope="col">{t('admin.recent.columns.package')}</th>
              <th scope="col">{t('admin.recent.columns.provider')}</th>
              <th scope="col" className="num">
                {t('admin.recent.columns.amount')}
              </th>
              <th scope="col">{t('admin.recent.columns.state')}</th>
            </tr>
          </thead>
          <tbody>
            {data.staffOrders.map((order: StaffOrderListItem) => (
              <tr key={order.id} data-order-row={order.id}>
                <th scope="row">
                  <Link to={`/admin/orders/${order.id}`}>
                    <code>{order.id}</code>
                  </Link>
                </th>
                <td className="nowrap" data-label={t('admin.recent.columns.created')}>
                  {format.dateTime(order.createdAt)}
                </td>
                <td data-label={t('admin.recent.columns.package')}>{packageName(order.packageId)}</td>
                <td data-label={t('admin.recent.columns.provider')}>{text.providerName(order.provider)}</td>
                <td className="num" data-label={t('admin.recent.columns.amount')}>
                  {format.money({ amount: order.amount, currency: order.currency })}
                </td>
                <td data-label={t('admin.recent.columns.state')}>
                  <StateBadge state={order.state} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
