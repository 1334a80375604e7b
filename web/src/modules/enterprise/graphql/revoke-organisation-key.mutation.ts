import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_KEY_FRAGMENT, type OrganisationKeyFragment } from './organisation-key.fragment.ts';

/** Refused at once on every instance. */
export const REVOKE_ORGANISATION_KEY: TypedDocumentNode<{ revokeOrganisationKey: OrganisationKeyFragment }, { id: string; organisationId: string }> = gql`
  mutation RevokeOrganisationKey($id: ID!, $organisationId: ID) {
    revokeOrganisationKey(id: $id, organisationId: $organisationId) {
      ...OrganisationKeyFragment
    }
  }
  ${ORGANISATION_KEY_FRAGMENT}
`;
