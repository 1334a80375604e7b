import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

/** An email invited to an organisation, waiting for an svc account to sign up with it. */
export interface OrganisationInvitationFragment {
  id: string;
  email: string;
  role: 'admin' | 'member';
  invitedAt: string;
}

export const ORGANISATION_INVITATION_FRAGMENT: TypedDocumentNode<OrganisationInvitationFragment> = gql`
  fragment OrganisationInvitationFragment on OrganisationInvitation {
    id
    email
    role
    invitedAt
  }
`;
