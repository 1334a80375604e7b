import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment } from './order.fragment.ts';

/** The order pushed over graphql-ws whenever its state changes (paid, failed, expired, refunded). */
export const ORDER_UPDATED_SUBSCRIPTION: TypedDocumentNode<{ orderUpdated: OrderFragment }, { id: string }> = gql`
  subscription OrderUpdated($id: ID!) {
    orderUpdated(id: $id) {
      ...OrderFragment
    }
  }
  ${ORDER_FRAGMENT}
`;
