/**
 * One order, kept current by the `orderUpdated` subscription: when the provider's notice arrives (or the
 * order fails or expires) the server pushes the order and Apollo's cache updates every view of it. When
 * it turns paid, the queries on screen that depend on the package (the account, the subscription) are
 * fetched again, so the whole page moves to the new plan without a reload.
 */
import { useApolloClient, useQuery, useSubscription } from '@apollo/client/react';
import { useRef } from 'react';
import type { OrderFragment } from '../graphql/order.fragment.ts';
import { ORDER_UPDATED_SUBSCRIPTION } from '../graphql/order-updated.subscription.ts';
import { ORDER_QUERY } from '../graphql/order.query.ts';
import type { LiveStatus } from '../../shell/components/live-badge.tsx';

export interface LiveOrder {
  order: OrderFragment | null | undefined;
  loading: boolean;
  error: Error | undefined;
  live: LiveStatus;
  retry(): void;
}

export function useLiveOrder(id: string): LiveOrder {
  const client = useApolloClient();
  const query = useQuery(ORDER_QUERY, { variables: { id }, notifyOnNetworkStatusChange: true });
  const lastState = useRef<string | null>(null);
  const subscription = useSubscription(ORDER_UPDATED_SUBSCRIPTION, {
    variables: { orderId: id },
    onData: ({ data }) => {
      const fresh = data.data?.orderUpdated;
      if (!fresh) return;
      client.writeQuery({ query: ORDER_QUERY, variables: { id }, data: { order: fresh } });
      if (fresh.state !== lastState.current && (fresh.state === 'paid' || fresh.state === 'refunded')) {
        // The package changed: refresh what shows it on screen (the account, the pools), and drop what other
        // pages cached about the old term (the period, the order list, upgrade quotes) so they ask again.
        for (const fieldName of ['subscription', 'orders', 'checkoutQuote']) client.cache.evict({ id: 'ROOT_QUERY', fieldName });
        client.cache.gc();
        void client.refetchQueries({ include: 'active' }).catch(() => undefined);
      }
      lastState.current = fresh.state;
    },
  });
  const order = query.data?.order;
  if (order && lastState.current === null) lastState.current = order.state;
  // The server answers once at subscribe time, so `data` means the stream is up.
  const live: LiveStatus = subscription.error ? 'interrupted' : subscription.data ? 'live' : 'connecting';
  return {
    order,
    loading: query.loading,
    error: query.error,
    live,
    retry: () => void query.refetch().catch(() => undefined),
  };
}
