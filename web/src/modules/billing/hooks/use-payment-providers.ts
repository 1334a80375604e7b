import { useQuery } from '@apollo/client/react';
import { PAYMENT_METHODS_QUERY, type PaymentMethodFragment } from '../graphql/payment-providers.query.ts';

/** The payment providers and which are on here (the answer only changes with config). */
export function usePaymentProviders(): { providers: PaymentMethodFragment[] | undefined; error: Error | undefined } {
  const { data, error } = useQuery(PAYMENT_METHODS_QUERY, { fetchPolicy: 'cache-first' });
  return { providers: data?.paymentMethods, error };
}
