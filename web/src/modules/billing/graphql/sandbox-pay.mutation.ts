import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment } from './order.fragment.ts';

/** The sandbox's answer for one of your own sandbox orders: paid, or failed with `paid: false`. */
export const SANDBOX_PAY_ORDER: TypedDocumentNode<{ sandboxPayOrder: OrderFragment }, { orderId: string; paid: boolean }> = gql`
  mutation SandboxPayOrder($orderId: ID!, $paid: Boolean) {
    sandboxPayOrder(orderId: $orderId, paid: $paid) {
      ...OrderFragment
    }
  }
  ${ORDER_FRAGMENT}
`;
