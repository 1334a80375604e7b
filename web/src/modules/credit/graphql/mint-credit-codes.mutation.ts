import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export const MINT_CREDIT_CODES: TypedDocumentNode<
  { mintCreditCodes: { batch: { id: string }; codes: string[] } },
  { value: string; count: number; usesPerCode: number; expiresAt?: string | null; note?: string | null }
> = gql`
  mutation MintCreditCodes($value: String!, $count: Int!, $usesPerCode: Int, $expiresAt: DateTime, $note: String) {
    mintCreditCodes(value: $value, count: $count, usesPerCode: $usesPerCode, expiresAt: $expiresAt, note: $note) {
      batch {
        id
      }
      codes
    }
  }
`;
