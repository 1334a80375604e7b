import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { USAGE_FRAGMENT, type UsageFragment } from '../../usage/graphql/usage.fragment.ts';

export interface OrganisationUsageUpdatedSubscription {
  organisationUsageUpdated: UsageFragment;
}

/** The organisation's pools: once at once, then whenever one of its keys' requests is admitted or settled, on any instance. */
export const ORGANISATION_USAGE_UPDATED_SUBSCRIPTION: TypedDocumentNode<OrganisationUsageUpdatedSubscription, { organisationId: string }> = gql`
  subscription OrganisationUsageUpdated($organisationId: ID!) {
    organisationUsageUpdated(organisationId: $organisationId) {
      ...UsageFragment
    }
  }
  ${USAGE_FRAGMENT}
`;
