import { useQuery } from '@apollo/client/react';
import { PLANS_QUERY } from '../graphql/plans.query.ts';
import type { PlanFragment } from '../graphql/plan.fragment.ts';

export interface PlansState {
  plans: PlanFragment[] | undefined;
  loading: boolean;
  error: Error | undefined;
  retry(): void;
}

export function usePlans(): PlansState {
  const { data, loading, error, refetch } = useQuery(PLANS_QUERY, { notifyOnNetworkStatusChange: true });
  return {
    plans: data?.plans,
    loading,
    error,
    // A failed refetch shows up as `error` on the next render; the rejected promise itself carries nothing new.
    retry: () => void refetch().catch(() => undefined),
  };
}
