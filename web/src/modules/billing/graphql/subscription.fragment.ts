import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

/** The member's current paid period; `packageId` is what they have now. */
export interface SubscriptionFragment {
  packageId: string;
  state: string;
  currentPeriodStart: string | null;
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
}

export const SUBSCRIPTION_FRAGMENT: TypedDocumentNode<SubscriptionFragment> = gql`
  fragment SubscriptionFragment on Subscription {
    packageId
    state
    currentPeriodStart
    currentPeriodEnd
    cancelAtPeriodEnd
  }
`;
