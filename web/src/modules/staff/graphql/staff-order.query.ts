import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { STAFF_ORDER_FRAGMENT, type StaffOrderFragment } from './staff-order.fragment.ts';

/** One order by its number (out_trade_no) or the provider's trade number; null when neither matches. */
export const STAFF_ORDER_QUERY: TypedDocumentNode<{ staffOrder: StaffOrderFragment | null }, { key: string }> = gql`
  query StaffOrder($key: String!) {
    staffOrder(key: $key) {
      ...StaffOrderFragment
    }
  }
  ${STAFF_ORDER_FRAGMENT}
`;
