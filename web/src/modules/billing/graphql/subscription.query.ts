import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { SUBSCRIPTION_FRAGMENT, type SubscriptionFragment } from './subscription.fragment.ts';

export const SUBSCRIPTION_QUERY: TypedDocumentNode<{ subscription: SubscriptionFragment | null }, Record<string, never>> = gql`
  query MembershipSubscription {
    subscription {
      ...SubscriptionFragment
    }
  }
  ${SUBSCRIPTION_FRAGMENT}
`;
