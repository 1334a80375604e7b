/**
 * `/account/billing`: the current period (package, start, end, whether it ends or goes on), cancel and
 * resume, the packages to move to, and every order with its state and amount, each opening its receipt.
 */
import { useMutation, useQuery } from '@apollo/client/react';
import { useId, useState } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import { EmptyState, ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { SignedIn } from '../../shell/components/signed-in.tsx';
import type { OrderFragment } from '../graphql/order.fragment.ts';
import { ORDERS_QUERY } from '../graphql/orders.query.ts';
import { CANCEL_SUBSCRIPTION } from '../graphql/cancel-subscription.mutation.ts';
import { RESUME_SUBSCRIPTION } from '../graphql/resume-subscription.mutation.ts';
import type { SubscriptionFragment } from '../graphql/subscription.fragment.ts';
import { SUBSCRIPTION_QUERY } from '../graphql/subscription.query.ts';
import { SignInFirst } from './checkout-page.tsx';
import { useBillingText } from './labels.ts';
import { PlanOptions } from './plan-options.tsx';
import { StateBadge } from './state-badge.tsx';
import './billing.css';

export function BillingPage() {
  const { t } = useTranslation(['billing', 'shell']);
  return (
    <div className="container page">
      <title>{t('shell:pageTitle', { page: t('billing.title') })}</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/account">{t('billing.breadcrumb')}</Link>
        </p>
        <h1>{t('billing.title')}</h1>
      </header>
      <SignedIn loadError={t('billing.loadError')} loadingLabel={t('billing.loading')} signedOut={<SignInFirst />}>
        {() => (
          <>
            <CurrentPeriod />
            <Orders />
          </>
        )}
      </SignedIn>
    </div>
  );
}

function CurrentPeriod() {
  const { t } = useTranslation('billing');
  const id = useId();
  const { data, loading, error, refetch } = useQuery(SUBSCRIPTION_QUERY, { fetchPolicy: 'cache-and-network', notifyOnNetworkStatusChange: true });
  const subscription = data?.subscription;
  return (
    <section className="section" aria-labelledby={`${id}-period`}>
      <div className="section__head">
        <h2 id={`${id}-period`}>{t('billing.period.heading')}</h2>
      </div>
      {error && !data ? (
        <ErrorState title={t('billing.period.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label={t('billing.period.loading')} />
      ) : (
        <div className="period-card" data-testid="current-period">
          <PeriodFacts subscription={subscription ?? null} />
          <div className="period-card__change">
            <h3>{t('billing.period.change')}</h3>
            <PlanOptions currentPackage={subscription && subscription.state !== 'expired' ? subscription.packageId : 'free'} />
          </div>
        </div>
      )}
    </section>
  );
}

function PeriodFacts({ subscription }: { subscription: SubscriptionFragment | null }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const packageName = usePackageName();
  // The term has no id to normalise it by, so the answer is written over the query's own entry.
  const [cancel, cancelState] = useMutation(CANCEL_SUBSCRIPTION, {
    update: (cache, { data }) => data && cache.writeQuery({ query: SUBSCRIPTION_QUERY, data: { subscription: data.cancelSubscription } }),
  });
  const [resume, resumeState] = useMutation(RESUME_SUBSCRIPTION, {
    update: (cache, { data }) => data && cache.writeQuery({ query: SUBSCRIPTION_QUERY, data: { subscription: data.resumeSubscription } }),
  });
  const [confirming, setConfirming] = useState(false);
  const [problem, setProblem] = useState<unknown>(null);
  const badge = <span className="badge" data-testid="current-package" />;
  const run = async (action: () => Promise<unknown>) => {
    setProblem(null);
    try {
      await action();
      setConfirming(false);
    } catch (caught) {
      setProblem(caught);
    }
  };
  const running = subscription && subscription.state !== 'expired' && subscription.packageId !== 'free';
  if (!running) {
    return (
      <div className="period-card__facts">
        <p className="lead">
          <Trans t={t} i18nKey="billing.period.free" values={{ plan: packageName(subscription?.packageId ?? 'free') }} components={{ badge }} />
        </p>
        <p className="muted">{t('billing.period.freeHint')}</p>
      </div>
    );
  }
  const end = format.dateTime(subscription.currentPeriodEnd);
  return (
    <div className="period-card__facts">
      <p className="lead">
        <Trans t={t} i18nKey="billing.period.on" values={{ plan: packageName(subscription.packageId) }} components={{ badge }} />
      </p>
      <dl className="order-facts">
        {subscription.currentPeriodStart && (
          <div>
            <dt>{t('billing.period.start')}</dt>
            <dd>{format.dateTime(subscription.currentPeriodStart)}</dd>
          </div>
        )}
        <div>
          <dt>{t('billing.period.end')}</dt>
          <dd data-testid="period-end">{end}</dd>
        </div>
      </dl>
      {subscription.nextPackageId && !subscription.cancelAtPeriodEnd && (
        <p className="callout callout--info" data-testid="next-package">
          {t('billing.period.next', { plan: packageName(subscription.nextPackageId), date: end })}
        </p>
      )}
      {subscription.cancelAtPeriodEnd ? (
        <>
          <p className="callout callout--warn" data-testid="cancel-at-period-end">
            {t('billing.period.ending', { date: end })}
          </p>
          <div className="actions">
            <button type="button" className="button" disabled={resumeState.loading} onClick={() => void run(() => resume())}>
              {resumeState.loading ? t('billing.period.resuming') : t('billing.period.resume')}
            </button>
          </div>
        </>
      ) : confirming ? (
        <div className="confirm" role="group" aria-label={t('billing.period.cancelConfirmLabel')}>
          <p>{t('billing.period.cancelConfirm', { date: end })}</p>
          <div className="actions">
            <button type="button" className="button button--danger" disabled={cancelState.loading} onClick={() => void run(() => cancel())}>
              {cancelState.loading ? t('billing.period.cancelling') : t('billing.period.cancelYes')}
            </button>
            <button type="button" className="button button--ghost" disabled={cancelState.loading} onClick={() => setConfirming(false)}>
              {t('billing.period.keep')}
            </button>
          </div>
        </div>
      ) : (
        <>
          <p className="muted">{t('billing.period.continues', { date: end })}</p>
          <div className="actions">
            <button type="button" className="button button--ghost" onClick={() => setConfirming(true)}>
              {t('billing.period.cancel')}
            </button>
          </div>
        </>
      )}
      <ProblemLine error={problem} />
    </div>
  );
}

function Orders() {
  const { t } = useTranslation('billing');
  const id = useId();
  const { data, loading, error, refetch } = useQuery(ORDERS_QUERY, { fetchPolicy: 'cache-and-network', notifyOnNetworkStatusChange: true });
  return (
    <section className="section" aria-labelledby={`${id}-orders`}>
      <div className="section__head">
        <h2 id={`${id}-orders`}>{t('billing.orders.heading')}</h2>
        <p className="muted">{t('billing.orders.note')}</p>
      </div>
      {error && !data ? (
        <ErrorState title={t('billing.orders.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />
      ) : !data ? (
        <LoadingState label={t('billing.orders.loading')} />
      ) : data.orders.length === 0 ? (
        <EmptyState title={t('billing.orders.empty')}>
          <p>{t('billing.orders.emptyHint')}</p>
        </EmptyState>
      ) : (
        <OrdersTable orders={data.orders} />
      )}
    </section>
  );
}

export function OrdersTable({
  orders,
  link = (order) => (order.state === 'created' ? `/checkout/${order.id}` : `/account/billing/orders/${order.id}`),
  staff = false,
}: {
  orders: OrderFragment[];
  link?: (order: OrderFragment) => string;
  /** In the admin app: every row opens the order's staff page. */
  staff?: boolean;
}) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const text = useBillingText();
  const packageName = usePackageName();
  return (
    <div className="table-scroll">
      <table className="data-table orders-table">
        <thead>
          <tr>
            <th scope="col">{t('billing.orders.columns.date')}</th>
            <th scope="col">{t('billing.orders.columns.package')}</th>
            <th scope="col">{t('billing.orders.columns.provider')}</th>
            <th scope="col" className="num">
              {t('billing.orders.columns.amount')}
            </th>
            <th scope="col">{t('billing.orders.columns.state')}</th>
            <th scope="col">
              <span className="visually-hidden">{t('billing.orders.columns.open')}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {orders.map((order) => (
            <tr key={order.id} data-order={order.id}>
              <td className="nowrap">{format.dateTime(order.createdAt)}</td>
              <td>{packageName(order.packageId)}</td>
              <td>{text.providerName(order.provider)}</td>
              <td className="num nowrap">{format.money({ amount: order.amount, currency: order.currency })}</td>
              <td>
                <StateBadge state={order.state} />
              </td>
              <td className="data-table__actions">
                <Link to={link(order)}>{staff ? t('billing.orders.details') : order.state === 'created' ? t('billing.orders.pay') : t('billing.orders.receipt')}</Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
