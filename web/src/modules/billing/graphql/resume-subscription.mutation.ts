import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { SUBSCRIPTION_FRAGMENT, type SubscriptionFragment } from './subscription.fragment.ts';

/** Takes a cancellation back before the period ends. */
export const RESUME_SUBSCRIPTION: TypedDocumentNode<{ resumeSubscription: SubscriptionFragment }, Record<string, never>> = gql`
  mutation ResumeSubscription {
    resumeSubscription {
      ...SubscriptionFragment
    }
  }
  ${SUBSCRIPTION_FRAGMENT}
`;
