import { gql } from '@apollo/client';

export interface MoneyFields {
  amountMicros: number;
  amount: string;
  currency: string;
}

export interface CreditFragment {
  __typename?: 'Credit';
  balance: MoneyFields;
  payFromCredit: boolean;
  topUpAmounts: MoneyFields[];
  minTopUp: MoneyFields;
  maxTopUp: MoneyFields;
}

/** The member's credit: balance, opt-in, what can be bought. */
export const CREDIT_FRAGMENT = gql`
  fragment CreditFragment on Credit {
    balance {
      amountMicros
      amount
      currency
    }
    payFromCredit
    topUpAmounts {
      amountMicros
      amount
      currency
    }
    minTopUp {
      amountMicros
      amount
      currency
    }
    maxTopUp {
      amountMicros
      amount
      currency
    }
  }
`;
