import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { CREDIT_FRAGMENT, type CreditFragment } from './credit.fragment.ts';

/** The member's credit (or their organisation's), now and whenever it changes (a purchase, a code, a request paid from credit). */
export const CREDIT_UPDATED_SUBSCRIPTION: TypedDocumentNode<{ creditUpdated: CreditFragment }, { organisationId?: string | null }> = gql`
  subscription CreditUpdated($organisationId: ID) {
    creditUpdated(organisationId: $organisationId) {
      ...CreditFragment
    }
  }
  ${CREDIT_FRAGMENT}
`;
