import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORDER_FRAGMENT, type OrderFragment, type PaymentProviderId } from './order.fragment.ts';

export interface CheckoutVariables {
  packageId: string;
  provider: PaymentProviderId;
  currency: string;
  /** The organisation that pays (the viewer is its owner or an admin); absent for the member's own account. */
  organisationId?: string | null;
}

/** Opens an order for one month of a package at a provider; the checkout page takes it from there. */
export const CHECKOUT: TypedDocumentNode<{ checkout: { order: OrderFragment } }, CheckoutVariables> = gql`
  mutation Checkout($packageId: String!, $provider: PaymentProvider!, $currency: String!, $organisationId: ID) {
    checkout(packageId: $packageId, provider: $provider, currency: $currency, organisationId: $organisationId) {
      order {
        ...OrderFragment
      }
    }
  }
  ${ORDER_FRAGMENT}
`;
