/**
 * One organisation's console data, kept live by two subscriptions: `organisationConnectionsChanged` pushes
 * the connecting IPs whenever the server flushes new counts (at most every half second), and
 * `organisationUsageUpdated` the pools whenever one of its keys' requests is admitted or settled; after a
 * settled request the rest (recent requests, the keys' last use) is fetched again, one refresh at a time.
 *
 * The refresh reads connections and pools too, so it can answer with older ones than a push that arrived
 * while it ran: what was pushed meanwhile is written again after it, and an update that came during a
 * refresh earns one more, so the last request always shows.
 */
import type { ApolloClient } from '@apollo/client';
import { useQuery, useSubscription } from '@apollo/client/react';
import { useRef } from 'react';
import { ORGANISATION_CONNECTIONS_CHANGED_SUBSCRIPTION } from '../graphql/organisation-connections-changed.subscription.ts';
import { ORGANISATION_CONSOLE_QUERY, type OrganisationConsole } from '../graphql/organisation-console.query.ts';
import { ORGANISATION_USAGE_UPDATED_SUBSCRIPTION } from '../graphql/organisation-usage-updated.subscription.ts';
import type { LiveStatus } from '../../shell/components/live-badge.tsx';
import { useSerialRefetch } from '../../shell/hooks/use-serial-refetch.ts';

export const CONSOLE_REQUESTS = 15;

type Pushed = Partial<Pick<OrganisationConsole, 'connections' | 'usage'>>;

export function useOrganisationConsole(organisationId: string) {
  const variables = { id: organisationId, requests: CONSOLE_REQUESTS };
  const query = useQuery(ORGANISATION_CONSOLE_QUERY, { variables, notifyOnNetworkStatusChange: true });
  // Pushed since the running refresh began: written again after it, as the refresh may read older values.
  const pushedMeanwhile = useRef<Pushed>({});
  const usageUpdates = useRef(0);

  const write = (client: ApolloClient, pushed: Pushed) =>
    client.cache.updateQuery({ query: ORGANISATION_CONSOLE_QUERY, variables }, (previous) =>
      previous?.organisation ? { organisation: { ...previous.organisation, ...pushed } } : previous,
    );
  const push = (client: ApolloClient, pushed: Pushed) => {
    write(client, pushed);
    Object.assign(pushedMeanwhile.current, pushed);
  };
  const refetch = useSerialRefetch(
    () => {
      pushedMeanwhile.current = {};
      return query.refetch(variables);
    },
    () => {
      if (Object.keys(pushedMeanwhile.current).length > 0) write(query.client, pushedMeanwhile.current);
      pushedMeanwhile.current = {};
    },
  );

  const connections = useSubscription(ORGANISATION_CONNECTIONS_CHANGED_SUBSCRIPTION, {
    variables: { organisationId },
    onData: ({ client, data }) => {
      const fresh = data.data?.organisationConnectionsChanged;
      if (fresh) push(client, { connections: fresh });
    },
  });
  const usage = useSubscription(ORGANISATION_USAGE_UPDATED_SUBSCRIPTION, {
    variables: { organisationId },
    onData: ({ client, data }) => {
      const fresh = data.data?.organisationUsageUpdated;
      if (!fresh) return;
      push(client, { usage: fresh });
      // The first answer is the state at subscribe time; later ones mean a request moved the pools.
      usageUpdates.current += 1;
      if (usageUpdates.current > 1) refetch();
    },
  });
  const live: LiveStatus = connections.error || usage.error ? 'interrupted' : connections.loading ? 'connecting' : 'live';
  return { ...query, live };
}
