import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ACCOUNT_FRAGMENT, type AccountFragment } from './account.fragment.ts';

export const VERIFY_EMAIL_CODE: TypedDocumentNode<{ verifyEmailCode: AccountFragment }, { email: string; code: string }> = gql`
  mutation VerifyEmailCode($email: String!, $code: String!) {
    verifyEmailCode(email: $email, code: $code) {
      ...AccountFragment
    }
  }
  ${ACCOUNT_FRAGMENT}
`;
