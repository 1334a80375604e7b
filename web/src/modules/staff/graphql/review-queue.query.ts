import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface ReviewQueue {
  pending: number;
  oldestSubmittedAt: string | null;
  oldestApplicationId: string | null;
}

export interface ReviewQueueQuery {
  reviewQueue: ReviewQueue;
}

/** How many enterprise applications wait for review, and since when (the navigation's count, the dashboard's tile). */
export const REVIEW_QUEUE_QUERY: TypedDocumentNode<ReviewQueueQuery, Record<string, never>> = gql`
  query ReviewQueue {
    reviewQueue {
      pending
      oldestSubmittedAt
      oldestApplicationId
    }
  }
`;
