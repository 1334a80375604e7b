import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { CREDIT_FRAGMENT, type CreditFragment, type MoneyFields } from './credit.fragment.ts';

export const REDEEM_CODE: TypedDocumentNode<{ redeemCode: { entry: { id: string; amount: MoneyFields }; credit: CreditFragment } }, { code: string }> = gql`
  mutation RedeemCode($code: String!) {
    redeemCode(code: $code) {
      entry {
        id
        amount {
          amountMicros
          amount
          currency
        }
      }
      credit {
        ...CreditFragment
      }
    }
  }
  ${CREDIT_FRAGMENT}
`;
