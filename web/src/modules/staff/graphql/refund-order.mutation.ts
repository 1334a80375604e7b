import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { STAFF_ORDER_FRAGMENT, type StaffOrderFragment } from './staff-order.fragment.ts';

/** Refunds a paid order in full at its provider (admin), with the reason kept in the audit log. */
export const REFUND_ORDER: TypedDocumentNode<{ refundOrder: StaffOrderFragment }, { id: string; reason: string }> = gql`
  mutation RefundOrder($id: ID!, $reason: String!) {
    refundOrder(id: $id, reason: $reason) {
      ...StaffOrderFragment
    }
  }
  ${STAFF_ORDER_FRAGMENT}
`;
