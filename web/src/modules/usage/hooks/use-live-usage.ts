/**
 * The usage page's data: the pools (query, then kept current by the `usageUpdated` subscription, which
 * answers once at once and again whenever a request is admitted or settled) and the first page of recent
 * requests, refetched after each update (one refetch at a time, and one more if an update came during it)
 * so the newest request and its cost appear without a reload.
 */
import { useQuery, useSubscription } from '@apollo/client/react';
import { useRef } from 'react';
import type { UsageFragment } from '../graphql/usage.fragment.ts';
import { USAGE_HISTORY_QUERY, type UsageHistoryQuery } from '../graphql/usage-history.query.ts';
import { USAGE_UPDATED_SUBSCRIPTION } from '../graphql/usage-updated.subscription.ts';
import { USAGE_QUERY } from '../graphql/usage.query.ts';
import type { LiveStatus } from '../../shell/components/live-badge.tsx';
import { useSerialRefetch } from '../../shell/hooks/use-serial-refetch.ts';

export const HISTORY_PAGE = 20;

export interface LiveUsage {
  usage: UsageFragment | undefined;
  usageLoading: boolean;
  usageError: Error | undefined;
  live: LiveStatus;
  history: UsageHistoryQuery['usageHistory'] | undefined;
  historyLoading: boolean;
  historyError: Error | undefined;
  loadingOlder: boolean;
  retry(): void;
  loadOlder(): void;
}

export function useLiveUsage(): LiveUsage {
  const usage = useQuery(USAGE_QUERY, { notifyOnNetworkStatusChange: true });
  const history = useQuery(USAGE_HISTORY_QUERY, { variables: { first: HISTORY_PAGE }, notifyOnNetworkStatusChange: true });
  const updates = useRef(0);
  const refreshHistory = useSerialRefetch(() => history.refetch({ first: HISTORY_PAGE, after: null }));
  const subscription = useSubscription(USAGE_UPDATED_SUBSCRIPTION, {
    onData: ({ client, data }) => {
      const fresh = data.data?.usageUpdated;
      if (!fresh) return;
      client.writeQuery({ query: USAGE_QUERY, data: { usage: fresh } });
      // The first answer is the state at subscribe time; later ones mean a request moved the pools.
      updates.current += 1;
      if (updates.current > 1) refreshHistory();
    },
  });
  const live: LiveStatus = subscription.error ? 'interrupted' : subscription.data ? 'live' : 'connecting';
  const older = history.networkStatus === 3; // NetworkStatus.fetchMore
  return {
    usage: usage.data?.usage,
    usageLoading: usage.loading,
    usageError: usage.error,
    live,
    history: history.data?.usageHistory,
    historyLoading: history.loading && !older,
    historyError: history.error,
    loadingOlder: older,
    retry: () => {
      void usage.refetch().catch(() => undefined);
      void history.refetch().catch(() => undefined);
    },
    loadOlder: () => {
      const cursor = history.data?.usageHistory.pageInfo.endCursor;
      if (!cursor) return;
      void history
        .fetchMore({
          variables: { first: HISTORY_PAGE, after: cursor },
          updateQuery: (previous, { fetchMoreResult }) => ({
            usageHistory: {
              nodes: [...previous.usageHistory.nodes, ...fetchMoreResult.usageHistory.nodes],
              pageInfo: fetchMoreResult.usageHistory.pageInfo,
            },
          }),
        })
        .catch(() => undefined);
    },
  };
}
