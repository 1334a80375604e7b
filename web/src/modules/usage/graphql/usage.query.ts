import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { USAGE_FRAGMENT, type UsageFragment } from './usage.fragment.ts';

export interface UsageQuery {
  usage: UsageFragment;
}

/** The signed-in account's pools: used, limit, remaining and reset time per class × window. */
export const USAGE_QUERY: TypedDocumentNode<UsageQuery, Record<string, never>> = gql`
  query Usage {
    usage {
      ...UsageFragment
    }
  }
  ${USAGE_FRAGMENT}
`;
