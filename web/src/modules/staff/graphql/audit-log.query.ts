import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { AUDIT_ENTRY_FRAGMENT, type AuditEntryFragment } from './audit-entry.fragment.ts';

export interface AuditLogFilter {
  actorEmail?: string | null;
  targetType?: string | null;
  targetId?: string | null;
  action?: string | null;
}

export interface AuditPage {
  nodes: AuditEntryFragment[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** The audit log, newest first, narrowed by actor, target and action. */
export const AUDIT_LOG_QUERY: TypedDocumentNode<{ auditLog: AuditPage }, { filter: AuditLogFilter; first?: number; after?: string | null }> = gql`
  query AuditLog($filter: AuditLogFilter, $first: Int, $after: String) {
    auditLog(filter: $filter, first: $first, after: $after) {
      nodes {
        ...AuditEntryFragment
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
  ${AUDIT_ENTRY_FRAGMENT}
`;
