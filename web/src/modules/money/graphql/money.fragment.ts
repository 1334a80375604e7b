import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface MoneyFragment {
  /** Exact decimal string, e.g. "0.042". */
  amount: string;
  /** Integer micro-units; use for comparisons and scales, never for display. */
  amountMicros: number;
  currency: string;
}

export const MONEY_FRAGMENT: TypedDocumentNode<MoneyFragment> = gql`
  fragment MoneyFragment on Money {
    amount
    amountMicros
    currency
  }
`;
