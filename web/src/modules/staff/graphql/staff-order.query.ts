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
  notices: PaymentNoticeFragment[];
}

export const STAFF_ORDER_FRAGMENT: TypedDocumentNode<StaffOrderFragment> = gql`
  fragment StaffOrderFragment on Order {
    ...OrderFragment
    accountId
    providerTradeNo
    refundReason
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

/** One order by its number (out_trade_no) or the provider's trade number; null when neither matches. */
export const STAFF_ORDER_QUERY: TypedDocumentNode<{ staffOrder: StaffOrderFragment | null }, { key: string }> = gql`
  query StaffOrder($key: String!) {
    staffOrder(key: $key) {
      ...StaffOrderFragment
    }
  }
  ${STAFF_ORDER_FRAGMENT}
`;

export type StaffOrderListItem = OrderFragment & { accountId: string };

/** The newest orders of everyone (or of one account), optionally in one state. */
export const STAFF_ORDERS_QUERY: TypedDocumentNode<{ staffOrders: StaffOrderListItem[] }, { accountId?: string | null; state?: string | null; first?: number }> = gql`
  query StaffOrders($accountId: ID, $state: OrderState, $first: Int) {
    staffOrders(accountId: $accountId, state: $state, first: $first) {
      ...OrderFragment
      accountId
    }
  }
  ${ORDER_FRAGMENT}
`;

/** Whose order it is, by email. */
export const ORDER_ACCOUNT_QUERY: TypedDocumentNode<{ account: { id: string; email: string } | null }, { id: string }> = gql`
  query OrderAccount($id: ID!) {
    account(id: $id) {
      id
      email
    }
  }
`;

/** Asks the provider about the order now (what the reconciliation job does), and applies the answer. */
export const REQUERY_ORDER: TypedDocumentNode<{ requeryOrder: { result: string; detail: string | null; order: StaffOrderFragment } }, { id: string }> = gql`
  mutation RequeryOrder($id: ID!) {
    requeryOrder(id: $id) {
      result
      detail
      order {
        ...StaffOrderFragment
      }
    }
  }
  ${STAFF_ORDER_FRAGMENT}
`;

/** Refunds a paid order in full at its provider (admin), with the reason kept in the audit log. */
export const REFUND_ORDER: TypedDocumentNode<{ refundOrder: StaffOrderFragment }, { id: string; reason: string }> = gql`
  mutation RefundOrder($id: ID!, $reason: String!) {
    refundOrder(id: $id, reason: $reason) {
      ...StaffOrderFragment
    }
  }
  ${STAFF_ORDER_FRAGMENT}
`;
