import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export const START_EMAIL_CODE: TypedDocumentNode<{ startEmailCode: { email: string; expiresAt: string } }, { email: string }> = gql`
  mutation StartEmailCode($email: String!) {
    startEmailCode(email: $email) {
      email
      expiresAt
    }
  }
`;
