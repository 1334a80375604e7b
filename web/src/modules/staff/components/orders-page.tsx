/**
 * `/admin/orders` (and `/admin/orders/:id`): find an order by its number or by the provider's trade
 * number, see whose it is and what happened to it (the audit entries), ask the provider about it again,
 * and — admins — refund it with a reason. The server checks every right again.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useEffect, useId, useState, type FormEvent } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { useBillingText } from '../../billing/components/labels.ts';
import { StateBadge } from '../../billing/components/state-badge.tsx';
import '../../billing/components/billing.css';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import { ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { AUDIT_LOG_QUERY } from '../graphql/audit-log.query.ts';
import { REFUND_ORDER, REQUERY_ORDER, STAFF_ORDER_QUERY, type StaffOrderFragment } from '../graphql/staff-order.query.ts';
import { useStaffViewer } from '../hooks/use-staff-viewer.ts';
import { ActionDialog } from './action-dialog.tsx';
import { AuditTable } from './audit-table.tsx';

export function OrdersPage() {
  const { t } = useTranslation(['billing', 'staff']);
  const id = useId();
  const navigate = useNavigate();
  const { id: routeId } = useParams();
  const [params] = useSearchParams();
  const lookup = (routeId ?? params.get('q') ?? '').trim();
  const [draft, setDraft] = useState(lookup);
  useEffect(() => setDraft(lookup), [lookup]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const q = draft.trim();
    void navigate(q ? `/admin/orders?q=${encodeURIComponent(q)}` : '/admin/orders');
  };
  return (
    <div className="admin-page">
      <title>{t('staff:pageTitle', { page: lookup || t('admin.title') })}</title>
      <header className="admin-head">
        <div>
          <h1>{t('admin.title')}</h1>
          <p className="muted admin-head__note">{t('admin.note')}</p>
        </div>
      </header>
      <form className="search-bar" role="search" onSubmit={submit}>
        <label htmlFor={`${id}-q`} className="visually-hidden">
          {t('admin.searchLabel')}
        </label>
        <input
          id={`${id}-q`}
          type="search"
          value={draft}
          onChange={(event) => setDraft(event.target.value)}
          placeholder={t('admin.searchPlaceholder')}
          autoComplete="off"
          spellCheck={false}
          maxLength={255}
        />
        <button type="submit" className="button">
          {t('admin.search')}
        </button>
      </form>
      {lookup ? (
        <OrderLookup key={lookup} lookup={lookup} />
      ) : (
        <div className="state state--empty">
          <p className="state__title">{t('admin.start')}</p>
          <p>{t('admin.startHint')}</p>
        </div>
      )}
    </div>
  );
}

function OrderLookup({ lookup }: { lookup: string }) {
  const { t } = useTranslation('billing');
  const { data, loading, error, refetch } = useQuery(STAFF_ORDER_QUERY, { variables: { lookup }, notifyOnNetworkStatusChange: true });
  if (error && !data) return <ErrorState title={t('admin.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data) return <LoadingState label={t('admin.loading')} />;
  const order = data.staffOrder;
  if (!order) {
    return (
      <div className="state state--empty">
        <p className="state__title">{t('admin.notFound')}</p>
        <p>
          <Trans t={t} i18nKey="admin.notFoundHint" values={{ lookup }} components={{ code: <code /> }} />
        </p>
      </div>
    );
  }
  return <OrderDetail order={order} />;
}

type Notice = { kind: 'requeried'; before: string; after: string } | { kind: 'refunded' };

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
  const money = (amount: string) => format.money({ amount, currency: order.currency });
  const canRefund = viewer.role === 'admin' && order.state === 'paid';

  const askProvider = async () => {
    setProblem(null);
    setNotice(null);
    try {
      const { data } = await requery({ variables: { id: order.id } });
      if (data) setNotice({ kind: 'requeried', before: order.state, after: data.requeryOrder.state });
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
            <Link to={`/admin/accounts/${order.accountId}`}>{order.accountEmail ?? order.accountId}</Link>
          </Fact>
          <Fact label={t('admin.facts.package')}>{packageName(order.packageId)}</Fact>
          <Fact label={t('admin.facts.amount')}>
            <strong data-testid="order-amount">{money(order.amount)}</strong>
          </Fact>
          {Number(order.creditAmount) > 0 && (
            <Fact label={t('admin.facts.listAndCredit')}>{t('admin.facts.listAndCreditValue', { list: money(order.listAmount), credit: money(order.creditAmount) })}</Fact>
          )}
          <Fact label={t('admin.facts.provider')}>{text.providerName(order.provider)}</Fact>
          <Fact label={t('admin.facts.tradeNo')}>{order.providerTradeNo ? <code>{order.providerTradeNo}</code> : <span className="muted">{t('admin.none')}</span>}</Fact>
          <Fact label={t('admin.facts.created')}>{format.dateTime(order.createdAt)}</Fact>
          {order.state === 'created' && <Fact label={t('admin.facts.expires')}>{format.dateTime(order.expiresAt)}</Fact>}
          {order.paidAt && <Fact label={t('admin.facts.paid')}>{format.dateTime(order.paidAt)}</Fact>}
          {order.closedAt && <Fact label={t('admin.facts.closed')}>{format.dateTime(order.closedAt)}</Fact>}
          {order.refundedAt && <Fact label={t('admin.facts.refunded')}>{format.dateTime(order.refundedAt)}</Fact>}
          {order.refundReason && <Fact label={t('admin.facts.refundReason')}>{order.refundReason}</Fact>}
        </dl>
      </header>
      <div className="account-actions">
        <button type="button" className="button button--ghost" onClick={() => void askProvider()} disabled={requeryState.loading}>
          {requeryState.loading ? t('admin.requerying') : t('admin.requery')}
        </button>
        {canRefund && (
          <button type="button" className="button button--danger" onClick={() => setRefunding(true)}>
            {t('admin.refund')}
          </button>
        )}
        {viewer.role !== 'admin' && order.state === 'paid' && <span className="muted account-actions--note">{t('admin.refundAdminOnly')}</span>}
      </div>
      <ProblemLine error={problem} />
      {notice && (
        <p className="notice" role="status">
          <span>
            {notice.kind === 'refunded'
              ? t('admin.refundedNotice', { amount: money(order.amount) })
              : notice.before === notice.after
                ? t('admin.requeryUnchanged', { state: text.stateLabel(notice.after) })
                : t('admin.requeryChanged', { before: text.stateLabel(notice.before), after: text.stateLabel(notice.after) })}
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
            await refund({ variables: { id: order.id, reason } });
            setRefunding(false);
            setNotice({ kind: 'refunded' });
            void audit.refetch().catch(() => undefined);
          }}
        >
          <p>{t('admin.refundBody', { amount: money(order.amount), provider: text.providerName(order.provider), email: order.accountEmail ?? order.accountId })}</p>
        </ActionDialog>
      )}
      <section className="admin-section">
        <h2>{t('admin.audit.heading')}</h2>
        {audit.error && !audit.data ? (
          <ErrorState title={t('admin.audit.loadError')} error={audit.error} onRetry={() => void audit.refetch().catch(() => undefined)} retrying={audit.loading} />
        ) : !audit.data ? (
          <LoadingState label={t('admin.audit.loading')} />
        ) : audit.data.auditLog.nodes.length === 0 ? (
          <div className="state state--empty state--compact">
            <p className="state__title">{t('admin.audit.empty')}</p>
          </div>
        ) : (
          <AuditTable entries={audit.data.auditLog.nodes} showTarget={false} />
        )}
      </section>
    </>
  );
}

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
