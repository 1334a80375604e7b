import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_MEMBER_FRAGMENT, type OrganisationMemberFragment } from './organisation-member.fragment.ts';
import type { OrganisationRole } from './organisation.fragment.ts';

/** Owner only; making someone owner hands ownership over (the old owner becomes admin). */
export const SET_ORGANISATION_MEMBER_ROLE: TypedDocumentNode<
  { setOrganisationMemberRole: OrganisationMemberFragment },
  { organisationId: string; accountId: string; role: OrganisationRole }
> = gql`
  mutation SetOrganisationMemberRole($organisationId: ID!, $accountId: ID!, $role: OrganisationRole!) {
    setOrganisationMemberRole(organisationId: $organisationId, accountId: $accountId, role: $role) {
      ...OrganisationMemberFragment
    }
  }
  ${ORGANISATION_MEMBER_FRAGMENT}
`;
