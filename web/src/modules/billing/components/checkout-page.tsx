/**
 * `/checkout/:orderId`: one order being paid. The summary on the left; on the right what to do at its
 * provider — WeChat Pay's QR code, a button to Alipay or Stripe, the sandbox's Pay and Fail buttons — and,
 * once the provider's notice has arrived (pushed by `orderUpdated`, no reload), the outcome: paid with the
 * new plan, or failed / expired with a way to try again.
 */
import { useMutation } from '@apollo/client/react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useFormat } from '../../../lib/format.ts';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import { EmptyState, ErrorState, LoadingState, ProblemLine } from '../../shell/components/query-state.tsx';
import { SignedIn, SignInPrompt } from '../../shell/components/signed-in.tsx';
import { CHECKOUT } from '../graphql/checkout.mutation.ts';
import type { OrderFragment } from '../graphql/order.fragment.ts';
import type { LiveStatus } from '../../shell/components/live-badge.tsx';
import { useLiveOrder } from '../hooks/use-live-order.ts';
import { useSandbox } from '../hooks/use-sandbox.ts';
import { useBillingText } from './labels.ts';
import { OrderSummary } from './order-summary.tsx';
import { QrCode } from './qr-code.tsx';
import './billing.css';

export function CheckoutPage() {
  const { t } = useTranslation(['billing', 'shell']);
  const { orderId = '' } = useParams();
  return (
    <div className="container page">
      <title>{t('shell:pageTitle', { page: t('checkout.title') })}</title>
      <header className="page-header">
        <p className="eyebrow">
          <Link to="/account/billing">{t('billing.title')}</Link>
        </p>
        <h1>{t('checkout.title')}</h1>
      </header>
      <SignedIn loadError={t('checkout.loadError')} loadingLabel={t('checkout.loading')} signedOut={<SignInFirst />}>
        {() => <LiveCheckout orderId={orderId} />}
      </SignedIn>
    </div>
  );
}

export function SignInFirst() {
  const { t } = useTranslation('billing');
  return (
    <SignInPrompt title={t('signIn.title')} body={t('signIn.body')} action={t('signIn.action')} />
  );
}

function LiveCheckout({ orderId }: { orderId: string }) {
  const { t } = useTranslation('billing');
  const { order, loading, error, live, retry } = useLiveOrder(orderId);
  if (error && !order) return <ErrorState title={t('checkout.loadError')} error={error} onRetry={retry} retrying={loading} />;
  if (order === undefined) return <LoadingState label={t('checkout.loading')} />;
  if (order === null) {
    return (
      <EmptyState title={t('checkout.notFound')}>
        <p>{t('checkout.notFoundHint')}</p>
        <Link className="button button--ghost" to="/account/billing">
          {t('checkout.toBilling')}
        </Link>
      </EmptyState>
    );
  }
  return (
    <div className="checkout">
      <OrderSummary order={order} />
      <section className="pay-panel" aria-live="polite" aria-label={t('checkout.panel')}>
        {order.state === 'created' ? <PayStep order={order} live={live} /> : <Outcome order={order} />}
      </section>
    </div>
  );
}

function PayStep({ order, live }: { order: OrderFragment; live: LiveStatus }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const text = useBillingText();
  const amount = format.money({ amount: order.amount, currency: order.currency });
  const provider = text.providerName(order.provider);
  return (
    <>
      {order.provider === 'sandbox' ? (
        <SandboxStep order={order} />
      ) : order.qrCode ? (
        <div className="pay-qr">
          <h2>{t('checkout.scan.heading', { provider })}</h2>
          <QrCode value={order.qrCode} label={t('checkout.scan.label', { amount, provider })} />
          <p>{t('checkout.scan.body', { amount })}</p>
        </div>
      ) : order.payUrl ? (
        <div className="pay-redirect">
          <h2>{t('checkout.redirect.heading', { provider })}</h2>
          <p>{t('checkout.redirect.body', { amount, provider })}</p>
          <a className="button pay-redirect__button" href={order.payUrl} data-testid="pay-link">
            {t('checkout.redirect.action', { provider })}
          </a>
          <p className="muted">{t('checkout.redirect.back')}</p>
        </div>
      ) : (
        <p className="state state--empty">{t('checkout.noPayment')}</p>
      )}
      <WaitingLine live={live} expiresAt={order.expiresAt} />
    </>
  );
}

function SandboxStep({ order }: { order: OrderFragment }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const sandbox = useSandbox(order.id);
  const amount = format.money({ amount: order.amount, currency: order.currency });
  return (
    <div className="pay-sandbox">
      <h2>{t('checkout.sandbox.heading')}</h2>
      <p>{t('checkout.sandbox.body', { amount })}</p>
      <div className="actions">
        <button type="button" className="button" disabled={sandbox.busy !== null} onClick={() => void sandbox.settle('paid')}>
          {sandbox.busy === 'paid' ? t('checkout.sandbox.paying') : t('checkout.sandbox.pay', { amount })}
        </button>
        <button type="button" className="button button--ghost" disabled={sandbox.busy !== null} onClick={() => void sandbox.settle('failed')}>
          {sandbox.busy === 'failed' ? t('checkout.sandbox.failing') : t('checkout.sandbox.fail')}
        </button>
      </div>
      <ProblemLine error={sandbox.problem} />
    </div>
  );
}

function WaitingLine({ live, expiresAt }: { live: LiveStatus; expiresAt: string }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  return (
    <p className={`waiting waiting--${live}`} role="status" data-live={live}>
      <span className="waiting__dot" aria-hidden="true" />
      {live === 'interrupted' ? t('checkout.waiting.interrupted') : t('checkout.waiting.live', { time: format.dateTime(expiresAt) })}
    </p>
  );
}

function Outcome({ order }: { order: OrderFragment }) {
  const { t } = useTranslation('billing');
  const packageName = usePackageName();
  const plan = packageName(order.packageId);
  if (order.state === 'paid') {
    return (
      <div className="outcome outcome--paid" data-testid="checkout-outcome">
        <span className="outcome__icon" aria-hidden="true">
          ✓
        </span>
        <h2>{t('checkout.paid.heading')}</h2>
        <p>{order.organisationId ? t('checkout.paid.organisationBody', { plan }) : t('checkout.paid.body', { plan })}</p>
        <div className="actions">
          {order.organisationId ? (
            <Link className="button" to={`/enterprise/console?org=${encodeURIComponent(order.organisationId)}`}>
              {t('checkout.paid.console')}
            </Link>
          ) : (
            <>
              <Link className="button" to="/account/usage">
                {t('checkout.paid.usage')}
              </Link>
              <Link className="button button--ghost" to="/account/billing">
                {t('checkout.paid.billing')}
              </Link>
            </>
          )}
        </div>
      </div>
    );
  }
  if (order.state === 'refunded' || order.state === 'refund_pending' || order.state === 'refund_failed') {
    const words = order.state === 'refunded' ? 'refunded' : order.state === 'refund_pending' ? 'refundPending' : 'refundFailed';
    return (
      <div className="outcome" data-testid="checkout-outcome">
        <h2>{t(`checkout.${words}.heading`)}</h2>
        <p>{t(`checkout.${words}.body`)}</p>
        <div className="actions">
          <Link className="button button--ghost" to="/account/billing">
            {t('checkout.paid.billing')}
          </Link>
        </div>
      </div>
    );
  }
  return (
    <div className="outcome outcome--problem" data-testid="checkout-outcome">
      <span className="outcome__icon" aria-hidden="true">
        !
      </span>
      <h2>{order.state === 'expired' ? t('checkout.expired.heading') : t('checkout.failed.heading')}</h2>
      <p>{order.state === 'expired' ? t('checkout.expired.body') : t('checkout.failed.body')}</p>
      <TryAgain order={order} />
    </div>
  );
}

/** A new order for the same package, provider and currency. */
function TryAgain({ order }: { order: OrderFragment }) {
  const { t } = useTranslation('billing');
  const navigate = useNavigate();
  const [checkout, state] = useMutation(CHECKOUT);
  const [problem, setProblem] = useState<unknown>(null);
  const again = async () => {
    setProblem(null);
    try {
      const { data } = await checkout({ variables: { packageId: order.packageId, provider: order.provider, currency: order.currency, organisationId: order.organisationId } });
      if (data) await navigate(`/checkout/${encodeURIComponent(data.checkout.order.id)}`);
    } catch (caught) {
      setProblem(caught);
    }
  };
  return (
    <>
      <div className="actions">
        <button type="button" className="button" disabled={state.loading} onClick={() => void again()}>
          {state.loading ? t('checkout.retrying') : t('checkout.retry')}
        </button>
        <Link className="button button--ghost" to="/pricing">
          {t('checkout.otherWay')}
        </Link>
      </div>
      <ProblemLine error={problem} />
    </>
  );
}
