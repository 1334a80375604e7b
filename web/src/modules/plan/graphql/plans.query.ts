import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { PLAN_FRAGMENT, type PlanFragment } from './plan.fragment.ts';

export interface PlansQuery {
  plans: PlanFragment[];
}

/** The public plan catalogue; no sign-in needed. */
export const PLANS_QUERY: TypedDocumentNode<PlansQuery, Record<string, never>> = gql`
  query Plans {
    plans {
      ...PlanFragment
    }
  }
  ${PLAN_FRAGMENT}
`;
