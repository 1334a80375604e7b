import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { MONEY_FRAGMENT, type MoneyFragment } from '../../money/graphql/money.fragment.ts';
import type { ModelClass, PoolWindow } from '../../plan/graphql/plan-package.fragment.ts';

export interface PoolUsageFragment {
  class: ModelClass;
  window: PoolWindow;
  used: MoneyFragment;
  limit: MoneyFragment;
  remaining: MoneyFragment;
  /** ISO 8601 instant the window ends. */
  resetsAt: string;
}

export const POOL_USAGE_FRAGMENT: TypedDocumentNode<PoolUsageFragment> = gql`
  fragment PoolUsageFragment on PoolUsage {
    class
    window
    used {
      ...MoneyFragment
    }
    limit {
      ...MoneyFragment
    }
    remaining {
      ...MoneyFragment
    }
    resetsAt
  }
  ${MONEY_FRAGMENT}
`;
