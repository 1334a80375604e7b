import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { POOL_USAGE_FRAGMENT, type PoolUsageFragment } from './pool-usage.fragment.ts';

export interface UsageFragment {
  planId: string;
  packageId: string;
  currency: string;
  timezone: string;
  pools: PoolUsageFragment[];
}

export const USAGE_FRAGMENT: TypedDocumentNode<UsageFragment> = gql`
  fragment UsageFragment on Usage {
    planId
    packageId
    currency
    timezone
    pools {
      ...PoolUsageFragment
    }
  }
  ${POOL_USAGE_FRAGMENT}
`;
