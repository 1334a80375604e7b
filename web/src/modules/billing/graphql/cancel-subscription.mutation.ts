import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { SUBSCRIPTION_FRAGMENT, type SubscriptionFragment } from './subscription.fragment.ts';

/** Stops renewal: the package stays until the period ends, then the account returns to Free. */
export const CANCEL_SUBSCRIPTION: TypedDocumentNode<{ cancelSubscription: SubscriptionFragment }, Record<string, never>> = gql`
  mutation CancelSubscription {
    cancelSubscription {
      ...SubscriptionFragment
    }
  }
  ${SUBSCRIPTION_FRAGMENT}
`;
