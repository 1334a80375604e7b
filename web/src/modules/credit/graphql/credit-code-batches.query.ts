import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import type { MoneyFields } from './credit.fragment.ts';

export interface CodeBatchFragment {
  id: string;
  createdAt: string;
  value: MoneyFields;
  expiresAt: string | null;
  usesPerCode: number;
  codeCount: number;
  usesLeft: number;
  note: string | null;
}

/** Admin: credit code batches, newest first. */
export const CREDIT_CODE_BATCHES_QUERY: TypedDocumentNode<{ creditCodeBatches: CodeBatchFragment[] }, Record<string, never>> = gql`
  query CreditCodeBatches {
    creditCodeBatches {
      id
      createdAt
      value {
      amountMicros
      amount
      currency
      }
      expiresAt
      usesPerCode
      codeCount
      usesLeft
      note
    }
  }
`;
