import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment } from './order.fragment.ts';

/** The order pushed over graphql-ws at once, then whenever its state changes (paid, failed, expired, refunded) on any instance. */
export const ORDER_UPDATED_SUBSCRIPTION: TypedDocumentNode<{ orderUpdated: OrderFragment }, { orderId: string }> = gql`
  subscription OrderUpdated($orderId: ID!) {
    orderUpdated(orderId: $orderId) {
      ...OrderFragment
    }
  }
  ${ORDER_FRAGMENT}
`;
