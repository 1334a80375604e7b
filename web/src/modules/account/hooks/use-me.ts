import { useApolloClient, useQuery } from '@apollo/client/react';
import type { AccountFragment } from '../graphql/account.fragment.ts';
import { ME_QUERY } from '../graphql/me.query.ts';

export interface MeState {
  me: AccountFragment | null | undefined;
  loading: boolean;
  error: Error | undefined;
  retry(): void;
  /** After sign-in or sign-out: drop everything cached for the previous identity and reload. */
  identityChanged(): Promise<void>;
}

export function useMe(): MeState {
  const client = useApolloClient();
  const { data, loading, error, refetch } = useQuery(ME_QUERY, { notifyOnNetworkStatusChange: true });
  return {
    me: data?.me,
    loading,
    error,
    retry: () => void refetch().catch(() => undefined),
    identityChanged: async () => {
      await client.resetStore();
    },
  };
}
