import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment } from '../../billing/graphql/order.fragment.ts';

export type StaffOrderListItem = OrderFragment & { accountId: string };

/** The newest orders of everyone (or of one account), optionally in one state. */
export const STAFF_ORDERS_QUERY: TypedDocumentNode<{ staffOrders: StaffOrderListItem[] }, { accountId?: string | null; state?: string | null; first?: number }> = gql`
  query StaffOrders($accountId: ID, $state: OrderState, $first: Int) {
    staffOrders(accountId: $accountId, state: $state, first: $first) {
      ...OrderFragment
      accountId
    }
  }
  ${ORDER_FRAGMENT}
`;
