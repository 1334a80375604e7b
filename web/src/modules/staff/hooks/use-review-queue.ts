/**
 * The enterprise review queue's length, kept live for the admin app's navigation and dashboard: the
 * `reviewQueue` query, asked again whenever `enterpriseApplicationChanged` says an application arrived,
 * was withdrawn or was decided — on any instance. One subscription, held by the admin layout; the
 * dashboard reads the same query from the cache, so both change together.
 */
import { useQuery, useSubscription } from '@apollo/client/react';
import { ENTERPRISE_APPLICATION_CHANGED_SUBSCRIPTION } from '../../enterprise/graphql/enterprise-application-changed.subscription.ts';
import { REVIEW_QUEUE_QUERY, type ReviewQueue } from '../graphql/review-queue.query.ts';
import { useSerialRefetch } from '../../shell/hooks/use-serial-refetch.ts';

export function useLiveReviewQueue(enabled: boolean): ReviewQueue | undefined {
  const { data, refetch } = useQuery(REVIEW_QUEUE_QUERY, { skip: !enabled });
  // One refetch at a time; an event during it asks for one more after, so the last change is never missed.
  const refresh = useSerialRefetch(refetch);
  useSubscription(ENTERPRISE_APPLICATION_CHANGED_SUBSCRIPTION, { skip: !enabled, onData: refresh });
  return data?.reviewQueue;
}

/** The queue as the dashboard shows it: what the layout's live query last read. */
export function useReviewQueue(): ReviewQueue | undefined {
  return useQuery(REVIEW_QUEUE_QUERY).data?.reviewQueue;
}
