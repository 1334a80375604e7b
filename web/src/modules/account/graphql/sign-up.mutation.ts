import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

/** Starts a sign-up: a code is emailed (the answer is the same if the address already has an account). */
export const SIGN_UP: TypedDocumentNode<{ signUp: { email: string; expiresAt: string } }, { email: string; password: string }> = gql`
  mutation SignUp($email: String!, $password: String!) {
    signUp(email: $email, password: $password) {
      email
      expiresAt
    }
  }
`;
