import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export const REMOVE_ORGANISATION_MEMBER: TypedDocumentNode<{ removeOrganisationMember: boolean }, { organisationId: string; accountId: string }> = gql`
  mutation RemoveOrganisationMember($organisationId: ID!, $accountId: ID!) {
    removeOrganisationMember(organisationId: $organisationId, accountId: $accountId)
  }
`;
