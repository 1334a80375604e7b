/**
 * One organisation's console data, kept live by two subscriptions: `organisationConnectionsChanged` pushes
 * the connecting IPs whenever the server flushes new counts (at most every second), and
 * `organisationUsageUpdated` the pools whenever one of its keys' requests is admitted or settled; after a
 * settled request the rest (recent requests, the keys' last use) is fetched again, one refresh at a time.
 */
import { useQuery, useSubscription } from '@apollo/client/react';
import { useRef } from 'react';
import { ORGANISATION_CONNECTIONS_CHANGED_SUBSCRIPTION } from '../graphql/organisation-connections-changed.subscription.ts';
import { ORGANISATION_CONSOLE_QUERY } from '../graphql/organisation-console.query.ts';
import { ORGANISATION_USAGE_UPDATED_SUBSCRIPTION } from '../graphql/organisation-usage-updated.subscription.ts';

export const CONSOLE_REQUESTS = 15;

export type LiveStatus = 'connecting' | 'live' | 'interrupted';

export function useOrganisationConsole(organisationId: string) {
  const variables = { id: organisationId, requests: CONSOLE_REQUESTS };
  const query = useQuery(ORGANISATION_CONSOLE_QUERY, { variables, notifyOnNetworkStatusChange: true });
  const refreshing = useRef<Promise<unknown> | null>(null);
  const usageUpdates = useRef(0);
  const connections = useSubscription(ORGANISATION_CONNECTIONS_CHANGED_SUBSCRIPTION, {
    variables: { organisationId },
    onData: ({ client, data }) => {
      const fresh = data.data?.organisationConnectionsChanged;
      if (!fresh) return;
      client.cache.updateQuery({ query: ORGANISATION_CONSOLE_QUERY, variables }, (previous) =>
        previous?.organisation ? { organisation: { ...previous.organisation, connections: fresh } } : previous,
      );
    },
  });
  const usage = useSubscription(ORGANISATION_USAGE_UPDATED_SUBSCRIPTION, {
    variables: { organisationId },
    onData: ({ client, data }) => {
      const fresh = data.data?.organisationUsageUpdated;
      if (!fresh) return;
      client.cache.updateQuery({ query: ORGANISATION_CONSOLE_QUERY, variables }, (previous) =>
        previous?.organisation ? { organisation: { ...previous.organisation, usage: fresh } } : previous,
      );
      // The first answer is the state at subscribe time; later ones mean a request moved the pools.
      usageUpdates.current += 1;
      if (usageUpdates.current > 1) refreshing.current ??= query.refetch(variables).catch(() => undefined).finally(() => (refreshing.current = null));
    },
  });
  const live: LiveStatus = connections.error || usage.error ? 'interrupted' : connections.loading ? 'connecting' : 'live';
  return { ...query, live };
}
