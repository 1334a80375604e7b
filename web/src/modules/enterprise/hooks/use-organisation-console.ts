/**
 * One organisation's console data, kept live: `organisationConnectionsChanged` pushes the connecting IPs
 * whenever the server flushes new counts (at most every second), and each push also refreshes the pools
 * and recent requests, since a new connection means a request was made.
 */
import { useQuery, useSubscription } from '@apollo/client/react';
import { useRef } from 'react';
import { ORGANISATION_CONNECTIONS_CHANGED_SUBSCRIPTION } from '../graphql/organisation-connections-changed.subscription.ts';
import { ORGANISATION_CONSOLE_QUERY } from '../graphql/organisation-console.query.ts';

export const CONSOLE_REQUESTS = 15;

export type LiveStatus = 'connecting' | 'live' | 'interrupted';

export function useOrganisationConsole(organisationId: string) {
  const variables = { id: organisationId, requests: CONSOLE_REQUESTS };
  const query = useQuery(ORGANISATION_CONSOLE_QUERY, { variables, notifyOnNetworkStatusChange: true });
  const refreshing = useRef<Promise<unknown> | null>(null);
  const subscription = useSubscription(ORGANISATION_CONNECTIONS_CHANGED_SUBSCRIPTION, {
    variables: { organisationId },
    onData: ({ client, data }) => {
      const connections = data.data?.organisationConnectionsChanged;
      if (!connections) return;
      client.cache.updateQuery({ query: ORGANISATION_CONSOLE_QUERY, variables }, (previous) =>
        previous?.organisation ? { organisation: { ...previous.organisation, connections } } : previous,
      );
      // One refresh at a time: a busy key pushes every second.
      refreshing.current ??= query.refetch(variables).catch(() => undefined).finally(() => (refreshing.current = null));
    },
  });
  const live: LiveStatus = subscription.error ? 'interrupted' : subscription.loading ? 'connecting' : 'live';
  return { ...query, live };
}
