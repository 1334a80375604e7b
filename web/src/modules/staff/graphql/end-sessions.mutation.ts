import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export const END_SESSIONS: TypedDocumentNode<{ endSessions: number }, { accountId: string; reason: string }> = gql`
  mutation EndSessions($accountId: ID!, $reason: String!) {
    endSessions(accountId: $accountId, reason: $reason)
  }
`;
