import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment, type PaymentProviderId } from '../../billing/graphql/order.fragment.ts';

/** A notification from a provider (or its answer to a query) about one order, and what it did. */
export interface PaymentNoticeFragment {
  id: string;
  createdAt: string;
  provider: PaymentProviderId;
  source: string;
  verified: boolean;
  outcome: string;
  reason: string | null;
  detail: string | null;
  status: string | null;
  amountMinor: number | null;
  currency: string | null;
  providerTradeNo: string | null;
}

/** An order as support sees it: whose it is and the provider's side of it. */
export interface StaffOrderFragment extends OrderFragment {
  accountId: string;
  providerTradeNo: string | null;
  refundReason: string | null;
  /** The provider's word for why the latest refund failed (CLOSED, ABNORMAL); null unless refund_failed. */
  refundFailure: string | null;
  notices: PaymentNoticeFragment[];
}

export const STAFF_ORDER_FRAGMENT: TypedDocumentNode<StaffOrderFragment> = gql`
  fragment StaffOrderFragment on Order {
    ...OrderFragment
    accountId
    providerTradeNo
    refundReason
    refundFailure
    notices {
      id
      createdAt
      provider
      source
      verified
      outcome
      reason
      detail
      status
      amountMinor
      currency
      providerTradeNo
    }
  }
  ${ORDER_FRAGMENT}
`;
