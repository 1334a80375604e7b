import { useQuery } from '@apollo/client/react';
import { PAYMENT_PROVIDERS_QUERY, type PaymentProviderFragment } from '../graphql/payment-providers.query.ts';

/** The providers switched on here (asked once per page load; the answer only changes with config). */
export function usePaymentProviders(): { providers: PaymentProviderFragment[] | undefined; error: Error | undefined } {
  const { data, error } = useQuery(PAYMENT_PROVIDERS_QUERY, { fetchPolicy: 'cache-first' });
  return { providers: data?.paymentProviders, error };
}
