import { useState } from 'react';

interface Page<T> {
  nodes: readonly T[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** The next page of a staff list after `endCursor` (nothing when there is none), and whether it is on its way. */
export function useLoadMore(endCursor: string | null | undefined, fetchPage: (after: string) => Promise<unknown>) {
  const [loadingMore, setLoadingMore] = useState(false);
  const more = async () => {
    if (!endCursor) return;
    setLoadingMore(true);
    try {
      await fetchPage(endCursor);
    } finally {
      setLoadingMore(false);
    }
  };
  return [loadingMore, more] as const;
}

/** A cursor page with the next one added under it, for `fetchMore`'s `updateQuery`. */
export function appendPage<P extends Page<unknown>>(previous: P, next: P): P {
  return { ...next, nodes: [...previous.nodes, ...next.nodes] };
}
