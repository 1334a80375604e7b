import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment } from './order.fragment.ts';

/** The member's orders, newest first. */
export const ORDERS_QUERY: TypedDocumentNode<{ orders: OrderFragment[] }, Record<string, never>> = gql`
  query Orders {
    orders {
      ...OrderFragment
    }
  }
  ${ORDER_FRAGMENT}
`;
