import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export const REVOKE_API_KEY: TypedDocumentNode<{ revokeApiKey: { id: string } }, { id: string }> = gql`
  mutation RevokeApiKey($id: ID!) {
    revokeApiKey(id: $id) {
      id
    }
  }
`;
