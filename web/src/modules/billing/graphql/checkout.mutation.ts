import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment, type PaymentProviderId } from './order.fragment.ts';

export interface CheckoutVariables {
  packageId: string;
  provider: PaymentProviderId;
  currency: string;
}

/** Opens an order for one month of a package at a provider; the checkout page takes it from there. */
export const CHECKOUT: TypedDocumentNode<{ checkout: { order: OrderFragment } }, CheckoutVariables> = gql`
  mutation Checkout($packageId: String!, $provider: PaymentProvider!, $currency: String!) {
    checkout(packageId: $packageId, provider: $provider, currency: $currency) {
      order {
        ...OrderFragment
      }
    }
  }
  ${ORDER_FRAGMENT}
`;
