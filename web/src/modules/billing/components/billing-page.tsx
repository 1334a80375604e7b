/**
 * `/account/billing`: the current period (package, start, end — it ends then: nothing renews by itself —
 * and what is already paid to follow), the packages to move to, and every order with its state and
 * amount, each opening its receipt.
 */
import { useQuery } from '@apollo/client/react';
import { useId } from 'react';
import { Trans, useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { SignedIn } from '../../shell/components/signed-in.tsx';
import type { OrderFragment } from '../graphql/order.fragment.ts';
import { ORDERS_QUERY } from '../graphql/orders.query.ts';
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
  const badge = <span className="badge" data-testid="current-package" />;
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
  const plan = packageName(subscription.packageId);
  // Nothing renews by itself, so there is nothing to cancel: the page says when the period ends and how to go on.
  return (
    <div className="period-card__facts">
      <p className="lead">
        <Trans t={t} i18nKey="billing.period.on" values={{ plan }} components={{ badge }} />
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
      {subscription.nextPackageId ? (
        <p className="callout callout--info" data-testid="next-package">
          {t('billing.period.next', { plan: packageName(subscription.nextPackageId), date: end })}
        </p>
      ) : (
        <div className="callout callout--info" data-testid="period-ends">
          <p>
            <strong>{t('billing.period.ends', { date: end })}</strong>
          </p>
          <p className="muted">{t('billing.period.renewHint', { plan })}</p>
        </div>
      )}
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
      <table className="data-table orders-table stacked-table">
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
              <td className="nowrap" data-label={t('billing.orders.columns.date')}>
                {format.dateTime(order.createdAt)}
              </td>
              <td data-label={t('billing.orders.columns.package')}>{packageName(order.packageId)}</td>
              <td data-label={t('billing.orders.columns.provider')}>{text.providerName(order.provider)}</td>
              <td className="num nowrap" data-label={t('billing.orders.columns.amount')}>
                {format.money({ amount: order.amount, currency: order.currency })}
              </td>
              <td data-label={t('billing.orders.columns.state')}>
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
