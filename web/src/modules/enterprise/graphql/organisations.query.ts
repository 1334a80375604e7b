import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_FRAGMENT, type OrganisationFragment } from './organisation.fragment.ts';

/** The plan of an organisation's package, as much as naming the package needs (the public catalogue leaves enterprise out). */
export interface OrganisationPlan {
  id: string;
  name: string;
  packages: { id: string; name: string }[];
}

export interface ListedOrganisation extends OrganisationFragment {
  plan: OrganisationPlan | null;
}

export interface OrganisationsQuery {
  organisations: ListedOrganisation[];
}

/** The organisations the signed-in member belongs to, in any role, with their package's plan for its name. */
export const ORGANISATIONS_QUERY: TypedDocumentNode<OrganisationsQuery, Record<string, never>> = gql`
  query Organisations {
    organisations {
      ...OrganisationFragment
      plan {
        id
        name
        packages {
          id
          name
        }
      }
    }
  }
  ${ORGANISATION_FRAGMENT}
`;
