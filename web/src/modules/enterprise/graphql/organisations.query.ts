import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_FRAGMENT, type OrganisationFragment } from './organisation.fragment.ts';

export interface OrganisationsQuery {
  organisations: OrganisationFragment[];
}

/** The organisations the signed-in member belongs to, in any role. */
export const ORGANISATIONS_QUERY: TypedDocumentNode<OrganisationsQuery, Record<string, never>> = gql`
  query Organisations {
    organisations {
      ...OrganisationFragment
    }
  }
  ${ORGANISATION_FRAGMENT}
`;
