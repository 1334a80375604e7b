import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { PLAN_FRAGMENT, type PlanFragment } from '../../plan/graphql/plan.fragment.ts';

export type OrganisationRole = 'owner' | 'admin' | 'member';

/** An organisation as the switcher and the console's header show it, with what the viewer may do there. */
export interface OrganisationFragment {
  id: string;
  name: string;
  packageId: string;
  /** The plan of its package (with the package among its packages): for the package's name. */
  plan: PlanFragment | null;
  createdAt: string;
  /** Null for staff looking at an organisation they do not belong to. */
  viewerRole: OrganisationRole | null;
  /** Owner and admins: mint and revoke keys. */
  viewerCanManageKeys: boolean;
  /** Owner: add, invite and remove members. */
  viewerCanManageMembers: boolean;
}

export const ORGANISATION_FRAGMENT: TypedDocumentNode<OrganisationFragment> = gql`
  fragment OrganisationFragment on Organisation {
    id
    name
    packageId
    plan {
      ...PlanFragment
    }
    createdAt
    viewerRole
    viewerCanManageKeys
    viewerCanManageMembers
  }
  ${PLAN_FRAGMENT}
`;
