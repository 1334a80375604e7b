/** What an order is for and what it costs: the checkout page's summary and the receipt. */
import { useTranslation } from 'react-i18next';
import { useFormat } from '../../../lib/format.ts';
import { usePackageName } from '../../plan/components/plan-labels.ts';
import type { OrderFragment } from '../graphql/order.fragment.ts';
import { useBillingText } from './labels.ts';
import { minorAmount } from './minor.ts';
import { StateBadge } from './state-badge.tsx';

export function OrderSummary({ order, detailed = false }: { order: OrderFragment; detailed?: boolean }) {
  const { t } = useTranslation('billing');
  const format = useFormat();
  const text = useBillingText();
  const packageName = usePackageName();
  const money = (amount: string) => format.money({ amount, currency: order.currency });
  const minor = (value: number) => money(minorAmount(value, order.currency));
  const credited = order.creditMinor > 0;
  return (
    <section className="order-summary" aria-label={t('summary.label')} data-order={order.id} data-state={order.state}>
      <div className="order-summary__head">
        <h2>{t('summary.item', { plan: packageName(order.packageId) })}</h2>
        <StateBadge state={order.state} />
      </div>
      <dl className="order-lines">
        {credited && (
          <>
            <div>
              <dt>{t('summary.list')}</dt>
              <dd>{minor(order.listMinor)}</dd>
            </div>
            <div>
              <dt>{t('summary.credit')}</dt>
              <dd>{t('summary.minus', { amount: minor(order.creditMinor) })}</dd>
            </div>
          </>
        )}
        <div className="order-lines__total">
          <dt>{t('summary.total')}</dt>
          <dd data-testid="order-amount">{money(order.amount)}</dd>
        </div>
      </dl>
      <dl className="order-facts">
        <div>
          <dt>{t('summary.provider')}</dt>
          <dd>{text.providerName(order.provider)}</dd>
        </div>
        <div>
          <dt>{t('summary.orderId')}</dt>
          <dd>
            <code>{order.id}</code>
          </dd>
        </div>
        <div>
          <dt>{t('summary.created')}</dt>
          <dd>{format.dateTime(order.createdAt)}</dd>
        </div>
        {order.state === 'created' && (
          <div>
            <dt>{t('summary.expires')}</dt>
            <dd>{format.dateTime(order.expiresAt)}</dd>
          </div>
        )}
        {order.paidAt && (
          <div>
            <dt>{t('summary.paid')}</dt>
            <dd>{format.dateTime(order.paidAt)}</dd>
          </div>
        )}
        {order.closedAt && order.state !== 'paid' && order.state !== 'refunded' && (
          <div>
            <dt>{t(order.state === 'expired' ? 'summary.expired' : 'summary.failed')}</dt>
            <dd>{format.dateTime(order.closedAt)}</dd>
          </div>
        )}
        {order.state === 'refund_pending' && order.refundRequestedAt && (
          <div>
            <dt>{t('summary.refundRequested')}</dt>
            <dd>{format.dateTime(order.refundRequestedAt)}</dd>
          </div>
        )}
        {order.refundedAt && (
          <div>
            <dt>{t('summary.refunded')}</dt>
            <dd>{format.dateTime(order.refundedAt)}</dd>
          </div>
        )}
        {detailed && (
          <div>
            <dt>{t('summary.currency')}</dt>
            <dd>{order.currency}</dd>
          </div>
        )}
      </dl>
      {credited && <p className="muted order-summary__note">{t('summary.creditNote')}</p>}
    </section>
  );
}
