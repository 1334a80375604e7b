import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import type { PaymentProviderId } from './order.fragment.ts';

export interface PaymentProviderFragment {
  id: PaymentProviderId;
  /** The currencies it charges in; null for any (the sandbox). */
  currencies: string[] | null;
}

/** The providers this server has switched on (a provider without keys is off). */
export const PAYMENT_PROVIDERS_QUERY: TypedDocumentNode<{ paymentProviders: PaymentProviderFragment[] }, Record<string, never>> = gql`
  query PaymentProviders {
    paymentProviders {
      id
      currencies
    }
  }
`;
