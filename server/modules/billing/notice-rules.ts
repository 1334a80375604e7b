/**
 * What a verified notice may do to an order — the money rules in one pure function, so every case is a
 * table row in a test. The order must exist, belong to the notice's provider (an order number is bound to
 * its provider at creation: a notice from another provider for the same number credits nothing), carry
 * the same app and merchant ids, and — for a payment — the exact amount and currency. State moves only
 * `created → paid | failed`; a paid order seen again through the same trade is a duplicate.
 */
import type { OrderState } from './billing.entity.ts';
import type { PaymentNotice, RefundNotice } from './providers/provider.ts';

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
  /** A refund notice for more (or less) than the order's refund. */
  'refund_amount_mismatch',
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
  const paidOrder = order.state === 'paid' || order.state === 'refunded' || order.state === 'refund_pending' || order.state === 'refund_failed';
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

export interface RefundFacts {
  provider: RefundNotice['provider'];
  state: OrderState;
  amountMinor: number;
  merchantId: string | null;
  /** Our id of the latest refund attempt; null before the first. */
  refundId: string | null;
  /** Our id the next attempt would use: a refund under it exists only if an attempt's answer was lost. */
  nextRefundId: string;
}

export type RefundDecision =
  | { kind: 'refunded' }
  | { kind: 'refund_failed' }
  | { kind: 'pending' }
  | { kind: 'duplicate' }
  | { kind: 'ignore'; reason: string }
  | { kind: 'reject'; reason: RejectReason; detail: string };

/**
 * What a verified refund notice may do. Only the latest attempt counts (an older, failed one says nothing
 * about the order now): `refund_pending` becomes `refunded` on success and `refund_failed` when the
 * provider gave up; a success after a recorded failure still refunds. A success for an attempt whose
 * answer never reached us (the order still `paid` or `refund_failed`, the notice under the next attempt's
 * id) is money returned too.
 */
export function decideRefund(order: RefundFacts | null, notice: RefundNotice): RefundDecision {
  if (!order) return reject('unknown_order', `no order ${notice.orderId}`);
  if (order.provider !== notice.provider) return reject('provider_mismatch', `order ${notice.orderId} is paid through ${order.provider}, not ${notice.provider}`);
  if (notice.merchantId !== null && order.merchantId !== notice.merchantId) {
    return reject('merchant_mismatch', `refund is from merchant ${notice.merchantId}, the order's is ${order.merchantId ?? '-'}`);
  }
  if (notice.amountMinor !== order.amountMinor) {
    return reject('refund_amount_mismatch', `refund says ${notice.amountMinor}, the order is ${order.amountMinor} (minor units)`);
  }
  const latest = notice.refundId === order.refundId;
  const lost = notice.refundId === order.nextRefundId && (order.state === 'paid' || order.state === 'refund_failed');
  if (!latest && !lost) return { kind: 'ignore', reason: `refund ${notice.refundId} is not the order's latest attempt (${order.refundId ?? 'none'})` };
  if (order.state === 'refunded') return notice.status === 'succeeded' ? { kind: 'duplicate' } : { kind: 'ignore', reason: 'order is already refunded' };
  switch (notice.status) {
    case 'succeeded':
      // Money returned, even after a failure was recorded (staff may settle an ABNORMAL refund at the provider).
      return { kind: 'refunded' };
    case 'failed':
      if (latest && order.state === 'refund_pending') return { kind: 'refund_failed' };
      return latest && order.state === 'refund_failed' ? { kind: 'duplicate' } : { kind: 'ignore', reason: `refund ${notice.refundId} failed and was never recorded` };
    case 'pending':
      return latest && order.state === 'refund_pending' ? { kind: 'pending' } : { kind: 'ignore', reason: `refund ${notice.refundId} is still on its way` };
  }
}

function reject(reason: RejectReason, detail: string): { kind: 'reject'; reason: RejectReason; detail: string } {
  return { kind: 'reject', reason, detail };
}
