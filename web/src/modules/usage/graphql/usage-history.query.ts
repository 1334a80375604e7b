import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { USAGE_RECORD_FRAGMENT, type UsageRecordFragment } from './usage-record.fragment.ts';

export interface UsageHistoryQuery {
  usageHistory: {
    nodes: UsageRecordFragment[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}

export interface UsageHistoryVariables {
  first?: number;
  after?: string | null;
}

/** The account's recent requests, newest first; `after` pages back through older ones. */
export const USAGE_HISTORY_QUERY: TypedDocumentNode<UsageHistoryQuery, UsageHistoryVariables> = gql`
  query UsageHistory($first: Int, $after: String) {
    usageHistory(first: $first, after: $after) {
      nodes {
        ...UsageRecordFragment
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
  ${USAGE_RECORD_FRAGMENT}
`;
