import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export const SIGN_OUT: TypedDocumentNode<{ signOut: boolean }, Record<string, never>> = gql`
  mutation SignOut {
    signOut
  }
`;
