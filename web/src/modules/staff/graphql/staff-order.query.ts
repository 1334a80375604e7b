import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment } from '../../billing/graphql/order.fragment.ts';

/** An order as support sees it: whose it is and the provider's side of it. */
export interface StaffOrderFragment extends OrderFragment {
  accountId: string;
  accountEmail: string | null;
  providerTradeNo: string | null;
  refundReason: string | null;
}

export const STAFF_ORDER_FRAGMENT: TypedDocumentNode<StaffOrderFragment> = gql`
  fragment StaffOrderFragment on Order {
    ...OrderFragment
    accountId
    accountEmail
    providerTradeNo
    refundReason
  }
  ${ORDER_FRAGMENT}
`;

/** One order by its number (out_trade_no) or the provider's trade number; null when neither matches. */
export const STAFF_ORDER_QUERY: TypedDocumentNode<{ staffOrder: StaffOrderFragment | null }, { lookup: string }> = gql`
  query StaffOrder($lookup: String!) {
    staffOrder(lookup: $lookup) {
      ...StaffOrderFragment
    }
  }
  ${STAFF_ORDER_FRAGMENT}
`;

/** Asks the provider about the order now (what the reconciliation job does), and applies the answer. */
export const REQUERY_ORDER: TypedDocumentNode<{ requeryOrder: StaffOrderFragment }, { id: string }> = gql`
  mutation RequeryOrder($id: ID!) {
    requeryOrder(id: $id) {
      ...StaffOrderFragment
    }
  }
  ${STAFF_ORDER_FRAGMENT}
`;

/** Refunds a paid order at its provider (admin), with the reason kept in the audit log. */
export const REFUND_ORDER: TypedDocumentNode<{ refundOrder: StaffOrderFragment }, { id: string; reason: string }> = gql`
  mutation RefundOrder($id: ID!, $reason: String!) {
    refundOrder(id: $id, reason: $reason) {
      ...StaffOrderFragment
    }
  }
  ${STAFF_ORDER_FRAGMENT}
`;
