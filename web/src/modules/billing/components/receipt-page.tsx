/** `/account/billing/orders/:orderId`: one order as a receipt — what was bought, for how much, how and when. */
import { useQuery } from '@apollo/client/react';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { EmptyState, ErrorState, LoadingState } from '../../shell/components/query-state.tsx';
import { SignedIn } from '../../shell/components/signed-in.tsx';
import { ORDER_QUERY } from '../graphql/order.query.ts';
import { SignInFirst } from './checkout-page.tsx';
import { OrderSummary } from './order-summary.tsx';
import './billing.css';

export function ReceiptPage() {
  const { t } = useTranslation(['billing', 'shell']);
  const { orderId = '' } = useParams();
  return (
    <div className="container page page--narrow">
      <title>{t('shell:pageTitle', { page: t('receipt.title') })}</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/account/billing">{t('billing.title')}</Link>
        </p>
        <h1>{t('receipt.title')}</h1>
      </header>
      <SignedIn loadError={t('receipt.loadError')} loadingLabel={t('receipt.loading')} signedOut={<SignInFirst />}>
        {(me) => <Receipt orderId={orderId} email={me.email} />}
      </SignedIn>
    </div>
  );
}

function Receipt({ orderId, email }: { orderId: string; email: string }) {
  const { t } = useTranslation('billing');
  const { data, loading, error, refetch } = useQuery(ORDER_QUERY, { variables: { id: orderId }, notifyOnNetworkStatusChange: true });
  if (error && !data) return <ErrorState title={t('receipt.loadError')} error={error} onRetry={() => void refetch().catch(() => undefined)} retrying={loading} />;
  if (!data) return <LoadingState label={t('receipt.loading')} />;
  const order = data.order;
  if (!order) {
    return (
      <EmptyState title={t('checkout.notFound')}>
        <p>{t('checkout.notFoundHint')}</p>
      </EmptyState>
    );
  }
  return (
    <div className="receipt">
      <p className="muted">{t('receipt.billedTo', { email })}</p>
      <OrderSummary order={order} detailed />
      <div className="actions receipt__actions">
        {order.state === 'created' ? (
          <Link className="button" to={`/checkout/${order.id}`}>
            {t('receipt.continue')}
          </Link>
        ) : (
          <button type="button" className="button button--ghost" onClick={() => window.print()}>
            {t('receipt.print')}
          </button>
        )}
        <Link className="button button--ghost" to="/account/billing">
          {t('receipt.back')}
        </Link>
      </div>
    </div>
  );
}
