import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export type SubscriptionState = 'active' | 'cancelled' | 'expired';

/** The member's paid term: the package of the current (or last) period and what happens at its end. */
export interface SubscriptionFragment {
  packageId: string;
  planId: string;
  /** active, cancelled (runs to the period end, then Free) or expired (back on Free). */
  state: SubscriptionState;
  currentPeriodStart: string;
  currentPeriodEnd: string;
  cancelAtPeriodEnd: boolean;
  /** A smaller package already paid for, starting at the period end. */
  nextPackageId: string | null;
  currency: string;
  paidMinor: number;
}

export const SUBSCRIPTION_FRAGMENT: TypedDocumentNode<SubscriptionFragment> = gql`
  fragment SubscriptionFragment on MembershipSubscription {
    packageId
    planId
    state
    currentPeriodStart
    currentPeriodEnd
    cancelAtPeriodEnd
    nextPackageId
    currency
    paidMinor
  }
`;
