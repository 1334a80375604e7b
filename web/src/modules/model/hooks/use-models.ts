import { useQuery } from '@apollo/client/react';
import { MODELS_QUERY } from '../graphql/models.query.ts';
import type { ProductModelFragment } from '../graphql/product-model.fragment.ts';

export interface ModelsState {
  models: ProductModelFragment[] | undefined;
  loading: boolean;
  error: Error | undefined;
  retry(): void;
}

export function useModels(): ModelsState {
  const { data, loading, error, refetch } = useQuery(MODELS_QUERY, { notifyOnNetworkStatusChange: true });
  return {
    models: data?.models,
    loading,
    error,
    // A failed refetch shows up as `error` on the next render; the rejected promise itself carries nothing new.
    retry: () => void refetch().catch(() => undefined),
  };
}
