import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export const REVOKE_OTHER_SESSIONS: TypedDocumentNode<{ revokeOtherSessions: number }, Record<string, never>> = gql`
  mutation RevokeOtherSessions {
    revokeOtherSessions
  }
`;
