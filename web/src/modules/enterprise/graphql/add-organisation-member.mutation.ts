import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_MEMBER_FRAGMENT, type OrganisationMemberFragment } from './organisation-member.fragment.ts';
import type { OrganisationRole } from './organisation.fragment.ts';

/** Adds an existing svc account by its email, in a role below owner. */
export const ADD_ORGANISATION_MEMBER: TypedDocumentNode<
  { addOrganisationMember: OrganisationMemberFragment },
  { organisationId: string; email: string; role: OrganisationRole }
> = gql`
  mutation AddOrganisationMember($organisationId: ID!, $email: String!, $role: OrganisationRole!) {
    addOrganisationMember(organisationId: $organisationId, email: $email, role: $role) {
      ...OrganisationMemberFragment
    }
  }
  ${ORGANISATION_MEMBER_FRAGMENT}
`;
