import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

/** Refused at once on every instance. */
export const REVOKE_ORGANISATION_KEY: TypedDocumentNode<{ revokeOrganisationKey: boolean }, { id: string }> = gql`
  mutation RevokeOrganisationKey($id: ID!) {
    revokeOrganisationKey(id: $id)
  }
`;
