import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface SessionFragment {
  id: string;
  kind: 'web' | 'device' | 'mcp';
  clientName: string | null;
  userAgent: string | null;
  ip: string | null;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  current: boolean;
}

export const SESSION_FRAGMENT: TypedDocumentNode<SessionFragment> = gql`
  fragment SessionFragment on Session {
    id
    kind
    clientName
    userAgent
    ip
    createdAt
    lastUsedAt
    expiresAt
    current
  }
`;
