import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export type OrganisationRole = 'owner' | 'admin' | 'member';

/** An organisation as the switcher and the console's header show it, with what the viewer may do there. */
export interface OrganisationFragment {
  id: string;
  name: string;
  packageId: string;
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
    createdAt
    viewerRole
    viewerCanManageKeys
    viewerCanManageMembers
  }
`;
