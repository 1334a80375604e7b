import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export type OrganisationRole = 'owner' | 'admin' | 'member';

/** An organisation as the switcher and the console's header show it, with what the viewer may do there. */
export interface OrganisationFragment {
  id: string;
  name: string;
  packageId: string;
  createdAt: string;
  viewerRole: OrganisationRole;
  /** Owner and admins: mint and revoke keys, invite and remove members. */
  viewerCanManage: boolean;
}

export const ORGANISATION_FRAGMENT: TypedDocumentNode<OrganisationFragment> = gql`
  fragment OrganisationFragment on Organisation {
    id
    name
    packageId
    createdAt
    viewerRole
    viewerCanManage
  }
`;
