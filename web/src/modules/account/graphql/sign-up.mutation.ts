import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ACCOUNT_FRAGMENT, type AccountFragment } from './account.fragment.ts';

export const SIGN_UP: TypedDocumentNode<{ signUp: AccountFragment }, { email: string; password: string }> = gql`
  mutation SignUp($email: String!, $password: String!) {
    signUp(email: $email, password: $password) {
      ...AccountFragment
    }
  }
  ${ACCOUNT_FRAGMENT}
`;
