import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface AuditEntryFragment {
  id: string;
  at: string;
  actorId: string | null;
  actorEmail: string | null;
  action: string;
  targetType: string;
  targetId: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  reason: string | null;
  requestId: string | null;
}

export const AUDIT_ENTRY_FRAGMENT: TypedDocumentNode<AuditEntryFragment> = gql`
  fragment AuditEntryFragment on AuditLogEntry {
    id
    at
    actorId
    actorEmail
    action
    targetType
    targetId
    before
    after
    reason
    requestId
  }
`;
