/**
 * What a verified notice may do to an order — the money rules in one pure function, so every case is a
 * table row in a test. The order must exist, belong to the notice's provider (an order number is bound to
 * its provider at creation: a notice from another provider for the same number credits nothing), carry
 * the same app and merchant ids, and — for a payment — the exact amount and currency. State moves only
 * `created → paid | failed`; a paid order seen again through the same trade is a duplicate.
 */
import type { OrderState } from './billing.entity.ts';
import type { PaymentNotice } from './providers/provider.ts';

export const rejectReasons = [
  'unknown_order',
  'provider_mismatch',
  'merchant_mismatch',
  'trade_mismatch',
  'amount_mismatch',
  'currency_mismatch',
  /** Money arrived for an order that had already failed or expired: staff must refund it. */
  'order_not_payable',
  /** A second, different trade paid an order that was already paid: staff must refund it. */
  'paid_by_other_trade',
  /** The provider's trade id already paid another order. */
  'trade_already_used',
] as const;
export type RejectReason = (typeof rejectReasons)[number];

export interface OrderFacts {
  provider: PaymentNotice['provider'];
  state: OrderState;
  amountMinor: number;
  currency: string;
  appId: string | null;
  merchantId: string | null;
  providerTradeNo: string | null;
}

export type NoticeDecision =
  | { kind: 'pay' }
  | { kind: 'fail' }
  | { kind: 'duplicate' }
  | { kind: 'pending' }
  | { kind: 'ignore'; reason: string }
  | { kind: 'reject'; reason: RejectReason; detail: string };

export function decideNotice(order: OrderFacts | null, notice: PaymentNotice): NoticeDecision {
  if (!order) return reject('unknown_order', `no order ${notice.orderId}`);
  if (order.provider !== notice.provider) {
    return reject('provider_mismatch', `order ${notice.orderId} is paid through ${order.provider}, not ${notice.provider}`);
  }
  if (order.appId !== notice.appId || order.merchantId !== notice.merchantId) {
    return reject(
      'merchant_mismatch',
      `notice is for app ${notice.appId ?? '-'} / merchant ${notice.merchantId ?? '-'}, the order for ${order.appId ?? '-'} / ${order.merchantId ?? '-'}`,
    );
  }
  const paidOrder = order.state === 'paid' || order.state === 'refunded';
  if (order.providerTradeNo && notice.providerTradeNo && order.providerTradeNo !== notice.providerTradeNo) {
    return paidOrder && notice.status === 'paid'
      ? reject('paid_by_other_trade', `order was paid by trade ${order.providerTradeNo}, this notice is for ${notice.providerTradeNo}`)
      : reject('trade_mismatch', `order belongs to trade ${order.providerTradeNo}, this notice is for ${notice.providerTradeNo}`);
  }
  switch (notice.status) {
    case 'pending':
      return order.state === 'created' ? { kind: 'pending' } : { kind: 'ignore', reason: `order is already ${order.state}` };
    case 'failed':
      return order.state === 'created' ? { kind: 'fail' } : { kind: 'ignore', reason: `order is already ${order.state}` };
    case 'paid':
      if (notice.amountMinor !== order.amountMinor) {
        return reject('amount_mismatch', `notice says ${notice.amountMinor}, the order is ${order.amountMinor} (minor units)`);
      }
      if (notice.currency !== order.currency) return reject('currency_mismatch', `notice says ${notice.currency}, the order is ${order.currency}`);
      if (order.state === 'created') return { kind: 'pay' };
      if (paidOrder) return { kind: 'duplicate' };
      return reject('order_not_payable', `order is ${order.state}; the payment needs a refund`);
  }
}

function reject(reason: RejectReason, detail: string): NoticeDecision {
  return { kind: 'reject', reason, detail };
}
