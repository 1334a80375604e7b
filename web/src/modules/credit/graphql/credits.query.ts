import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { CREDIT_FRAGMENT, type CreditFragment, type MoneyFields } from './credit.fragment.ts';

export interface CreditEntryFragment {
  id: string;
  kind: 'purchase' | 'code' | 'spend' | 'refund' | 'adjustment';
  amount: MoneyFields;
  balanceAfter: MoneyFields;
  reference: string | null;
  note: string | null;
  at: string;
}

/** The member's credit (or, with `organisationId`, their organisation's) and the latest entries (newest first). */
export const CREDITS_QUERY: TypedDocumentNode<{ credits: CreditFragment; creditEntries: { entries: CreditEntryFragment[]; nextCursor: string | null } }, { first?: number; organisationId?: string | null }> = gql`
  query Credits($first: Int, $organisationId: ID) {
    credits(organisationId: $organisationId) {
      ...CreditFragment
    }
    creditEntries(first: $first, organisationId: $organisationId) {
      entries {
        id
        kind
        amount {
          amountMicros
          amount
          currency
        }
        balanceAfter {
          amountMicros
          amount
          currency
        }
        reference
        note
        at
      }
      nextCursor
    }
  }
  ${CREDIT_FRAGMENT}
`;
