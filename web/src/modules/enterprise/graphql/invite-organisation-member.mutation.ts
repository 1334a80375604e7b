import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_INVITATION_FRAGMENT, type OrganisationInvitationFragment } from './organisation-invitation.fragment.ts';
import { ORGANISATION_MEMBER_FRAGMENT, type OrganisationMemberFragment } from './organisation-member.fragment.ts';

export type InvitationRole = 'admin' | 'member';

/** An email with an svc account becomes a member at once; any other email is invited and joins when it signs up. */
export const INVITE_ORGANISATION_MEMBER: TypedDocumentNode<
  { inviteOrganisationMember: { member: OrganisationMemberFragment | null; invitation: OrganisationInvitationFragment | null } },
  { organisationId: string; email: string; role: InvitationRole }
> = gql`
  mutation InviteOrganisationMember($organisationId: ID!, $email: String!, $role: OrganisationInvitationRole) {
    inviteOrganisationMember(organisationId: $organisationId, email: $email, role: $role) {
      member {
        ...OrganisationMemberFragment
      }
      invitation {
        ...OrganisationInvitationFragment
      }
    }
  }
  ${ORGANISATION_MEMBER_FRAGMENT}
  ${ORGANISATION_INVITATION_FRAGMENT}
`;
