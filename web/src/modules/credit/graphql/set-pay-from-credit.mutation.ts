import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { CREDIT_FRAGMENT, type CreditFragment } from './credit.fragment.ts';

export const SET_PAY_FROM_CREDIT: TypedDocumentNode<{ setPayFromCredit: CreditFragment }, { on: boolean; organisationId?: string | null }> = gql`
  mutation SetPayFromCredit($on: Boolean!, $organisationId: ID) {
    setPayFromCredit(on: $on, organisationId: $organisationId) {
      ...CreditFragment
    }
  }
  ${CREDIT_FRAGMENT}
`;
