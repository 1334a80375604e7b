import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_KEY_FRAGMENT, type OrganisationKeyFragment } from './organisation-key.fragment.ts';

/** The only response that ever carries the full `svc_ent_` token. */
export const CREATE_ORGANISATION_KEY: TypedDocumentNode<
  { createOrganisationKey: { token: string; key: OrganisationKeyFragment } },
  { organisationId: string; name: string; allowedCidrs: string[] }
> = gql`
  mutation CreateOrganisationKey($organisationId: ID!, $name: String!, $allowedCidrs: [String!]) {
    createOrganisationKey(organisationId: $organisationId, name: $name, allowedCidrs: $allowedCidrs) {
      token
      key {
        ...OrganisationKeyFragment
      }
    }
  }
  ${ORGANISATION_KEY_FRAGMENT}
`;
