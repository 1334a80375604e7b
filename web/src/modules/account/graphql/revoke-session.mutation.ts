import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export const REVOKE_SESSION: TypedDocumentNode<{ revokeSession: { id: string } }, { id: string }> = gql`
  mutation RevokeSession($id: ID!) {
    revokeSession(id: $id) {
      id
    }
  }
`;
