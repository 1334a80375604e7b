import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import type { OrganisationRole } from './organisation.fragment.ts';

export interface OrganisationMemberFragment {
  accountId: string;
  email: string;
  role: OrganisationRole;
  joinedAt: string;
}

export const ORGANISATION_MEMBER_FRAGMENT: TypedDocumentNode<OrganisationMemberFragment> = gql`
  fragment OrganisationMemberFragment on OrganisationMember {
    accountId
    email
    role
    joinedAt
  }
`;
