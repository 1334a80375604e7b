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

export const CONSOLE_REQUESTS = 15;

export type LiveStatus = 'connecting' | 'live' | 'interrupted';

type Pushed = Partial<Pick<OrganisationConsole, 'connections' | 'usage'>>;

export function useOrganisationConsole(organisationId: string) {
  const variables = { id: organisationId, requests: CONSOLE_REQUESTS };
  const query = useQuery(ORGANISATION_CONSOLE_QUERY, { variables, notifyOnNetworkStatusChange: true });
  const refresh = useRef({ running: false, again: false, pushedMeanwhile: {} as Pushed });
  const usageUpdates = useRef(0);

  const write = (client: ApolloClient, pushed: Pushed) =>
    client.cache.updateQuery({ query: ORGANISATION_CONSOLE_QUERY, variables }, (previous) =>
      previous?.organisation ? { organisation: { ...previous.organisation, ...pushed } } : previous,
    );
  const push = (client: ApolloClient, pushed: Pushed) => {
    write(client, pushed);
    if (refresh.current.running) Object.assign(refresh.current.pushedMeanwhile, pushed);
  };
  const refetch = (client: ApolloClient) => {
    const state = refresh.current;
    if (state.running) {
      state.again = true;
      return;
    }
    state.running = true;
    void query
      .refetch(variables)
      .catch(() => undefined)
      .finally(() => {
        if (Object.keys(state.pushedMeanwhile).length > 0) write(client, state.pushedMeanwhile);
        state.pushedMeanwhile = {};
        state.running = false;
        if (state.again) {
          state.again = false;
          refetch(client);
        }
      });
  };

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
      if (usageUpdates.current > 1) refetch(client);
    },
  });
  const live: LiveStatus = connections.error || usage.error ? 'interrupted' : connections.loading ? 'connecting' : 'live';
  return { ...query, live };
}
