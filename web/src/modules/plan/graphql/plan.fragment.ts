import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { PLAN_PACKAGE_FRAGMENT, type PlanPackageFragment } from './plan-package.fragment.ts';

export type PlanId = 'free' | 'pro' | 'max';

export interface PlanFragment {
  id: PlanId;
  name: string;
  description: string;
  requestsPerMinute: number;
  packages: PlanPackageFragment[];
}

export const PLAN_FRAGMENT: TypedDocumentNode<PlanFragment> = gql`
  fragment PlanFragment on Plan {
    id
    name
    description
    requestsPerMinute
    packages {
      ...PlanPackageFragment
    }
  }
  ${PLAN_PACKAGE_FRAGMENT}
`;
