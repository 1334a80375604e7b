import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment } from './order.fragment.ts';

/** The member's orders, newest first. */
export const ORDERS_QUERY: TypedDocumentNode<{ orders: OrderFragment[] }, { first?: number }> = gql`
  query Orders($first: Int) {
    orders(first: $first) {
      ...OrderFragment
    }
  }
  ${ORDER_FRAGMENT}
`;
