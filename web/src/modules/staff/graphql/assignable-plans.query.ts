import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { PLAN_FRAGMENT, type PlanFragment } from '../../plan/graphql/plan.fragment.ts';

export interface AssignablePlansQuery {
  assignablePlans: PlanFragment[];
}

/** Staff: every plan and package, those only staff assign (enterprise) included, for package pickers. */
export const ASSIGNABLE_PLANS_QUERY: TypedDocumentNode<AssignablePlansQuery, Record<string, never>> = gql`
  query AssignablePlans {
    assignablePlans {
      ...PlanFragment
    }
  }
  ${PLAN_FRAGMENT}
`;
