import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_FRAGMENT, type OrganisationFragment } from '../../enterprise/graphql/organisation.fragment.ts';

export interface AccountOrganisationsQuery {
  /** `viewerRole` here is the account's role in each organisation. */
  account: { id: string; organisations: OrganisationFragment[] } | null;
}

/** Staff: the organisations an account belongs to, and its role in each. */
export const ACCOUNT_ORGANISATIONS_QUERY: TypedDocumentNode<AccountOrganisationsQuery, { id: string }> = gql`
  query AccountOrganisations($id: ID!) {
    account(id: $id) {
      id
      organisations {
        ...OrganisationFragment
      }
    }
  }
  ${ORGANISATION_FRAGMENT}
`;
