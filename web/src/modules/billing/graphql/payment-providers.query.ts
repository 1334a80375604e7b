import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import type { PaymentProviderId } from './order.fragment.ts';

export interface PaymentMethodFragment {
  id: PaymentProviderId;
  /** Whether this server takes payments through it (a provider without its keys is off). */
  enabled: boolean;
  /** The currencies it charges in; null for any currency a package has a price in (the sandbox). */
  currencies: string[] | null;
}

export const PAYMENT_METHODS_QUERY: TypedDocumentNode<{ paymentMethods: PaymentMethodFragment[] }, Record<string, never>> = gql`
  query PaymentMethods {
    paymentMethods {
      id
      enabled
      currencies
    }
  }
`;
