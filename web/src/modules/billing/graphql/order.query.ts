import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment } from './order.fragment.ts';

/** One of the member's own orders, or null (someone else's order is not found either). */
export const ORDER_QUERY: TypedDocumentNode<{ order: OrderFragment | null }, { id: string }> = gql`
  query Order($id: ID!) {
    order(id: $id) {
      ...OrderFragment
    }
  }
  ${ORDER_FRAGMENT}
`;
