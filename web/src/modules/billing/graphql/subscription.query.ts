import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { SUBSCRIPTION_FRAGMENT, type SubscriptionFragment } from './subscription.fragment.ts';

/** The signed-in member's paid term, or (organisationId) that of an organisation they own or administer. */
export const SUBSCRIPTION_QUERY: TypedDocumentNode<{ subscription: SubscriptionFragment | null }, { organisationId?: string | null }> = gql`
  query MembershipSubscription($organisationId: ID) {
    subscription(organisationId: $organisationId) {
      ...SubscriptionFragment
    }
  }
  ${SUBSCRIPTION_FRAGMENT}
`;
