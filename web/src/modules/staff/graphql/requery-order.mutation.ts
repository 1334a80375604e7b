import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { STAFF_ORDER_FRAGMENT, type StaffOrderFragment } from './staff-order.fragment.ts';

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
