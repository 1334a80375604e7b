import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ACCOUNT_FRAGMENT, type AccountFragment } from './account.fragment.ts';

export const SIGN_IN: TypedDocumentNode<{ signIn: AccountFragment }, { email: string; password: string }> = gql`
  mutation SignIn($email: String!, $password: String!) {
    signIn(email: $email, password: $password) {
      ...AccountFragment
    }
  }
  ${ACCOUNT_FRAGMENT}
`;
