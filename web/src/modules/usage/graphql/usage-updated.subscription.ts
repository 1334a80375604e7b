import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { USAGE_FRAGMENT, type UsageFragment } from './usage.fragment.ts';

export interface UsageUpdatedSubscription {
  usageUpdated: UsageFragment;
}

/** The same pools, pushed over graphql-ws: once at once, then whenever a request is admitted or settled. */
export const USAGE_UPDATED_SUBSCRIPTION: TypedDocumentNode<UsageUpdatedSubscription, Record<string, never>> = gql`
  subscription UsageUpdated {
    usageUpdated {
      ...UsageFragment
    }
  }
  ${USAGE_FRAGMENT}
`;
