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
  /** Owner and admins: buy a package for it (it pays), cancel or resume its subscription. */
  viewerCanManageBilling: boolean;
  /** Owner and admins: read its monthly statements and its credit. */
  viewerCanReadStatements: boolean;
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
    viewerCanManageBilling
    viewerCanReadStatements
  }
`;
