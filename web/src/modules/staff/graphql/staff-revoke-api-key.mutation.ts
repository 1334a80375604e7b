import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

/** Staff revoke another account's key, with the reason the audit log keeps. */
export const STAFF_REVOKE_API_KEY: TypedDocumentNode<{ revokeApiKey: { id: string } }, { id: string; reason: string }> = gql`
  mutation StaffRevokeApiKey($id: ID!, $reason: String!) {
    revokeApiKey(id: $id, reason: $reason) {
      id
    }
  }
`;
