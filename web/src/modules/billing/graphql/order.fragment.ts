import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export type OrderState = 'created' | 'paid' | 'failed' | 'expired' | 'refunded' | 'refund_pending' | 'refund_failed';

export const orderStates: readonly OrderState[] = ['created', 'paid', 'failed', 'expired', 'refunded', 'refund_pending', 'refund_failed'];
export type PaymentProviderId = 'alipay' | 'wechat' | 'stripe' | 'sandbox';

/** One checkout as its payer sees it; amounts are exact decimal strings in the order's currency. */
export interface OrderFragment {
  /** The `out_trade_no` sent to Alipay and WeChat Pay. */
  id: string;
  state: OrderState;
  provider: PaymentProviderId;
  packageId: string;
  /** The organisation that pays, when its owner or an admin bought the package for it; null for the member's own order. */
  organisationId: string | null;
  currency: string;
  /** What is charged: the list price less the credit ("65.00"). */
  amount: string;
  amountMinor: number;
  /** The package's price when the order was made, in minor units. */
  listMinor: number;
  /** Unused time of the previous period credited against the price (upgrades), in minor units; 0 otherwise. */
  creditMinor: number;
  /** Where to pay (Alipay, Stripe, the sandbox), while the order is open. */
  payUrl: string | null;
  /** WeChat Pay's `code_url`, to draw as a QR code, while the order is open. */
  qrCode: string | null;
  createdAt: string;
  expiresAt: string;
  paidAt: string | null;
  closedAt: string | null;
  refundedAt: string | null;
  /** When the latest refund was asked for; it may still be on its way (`refund_pending`). */
  refundRequestedAt: string | null;
}

export const ORDER_FRAGMENT: TypedDocumentNode<OrderFragment> = gql`
  fragment OrderFragment on Order {
    id
    state
    provider
    packageId
    organisationId
    currency
    amount
    amountMinor
    listMinor
    creditMinor
    payUrl
    qrCode
    createdAt
    expiresAt
    paidAt
    closedAt
    refundedAt
    refundRequestedAt
  }
`;
