import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export type PurchaseKind = 'start' | 'extend' | 'upgrade' | 'downgrade';

export interface CheckoutQuoteFragment {
  packageId: string;
  kind: PurchaseKind;
  currency: string;
  /** What the order would charge ("56.12"). */
  amountDue: string;
  listMinor: number;
  creditMinor: number;
  /** Now, or the end of the current period (a downgrade). */
  startsAt: string;
}

/** What buying a package now would do and cost, the upgrade credit included. */
export const CHECKOUT_QUOTE_QUERY: TypedDocumentNode<{ checkoutQuote: CheckoutQuoteFragment }, { packageId: string; currency: string; organisationId?: string | null }> = gql`
  query CheckoutQuote($packageId: String!, $currency: String!, $organisationId: ID) {
    checkoutQuote(packageId: $packageId, currency: $currency, organisationId: $organisationId) {
      packageId
      kind
      currency
      amountDue
      listMinor
      creditMinor
      startsAt
    }
  }
`;
