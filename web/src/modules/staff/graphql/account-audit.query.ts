import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import type { AuditPage } from './audit-log.query.ts';
import { AUDIT_ENTRY_FRAGMENT } from './audit-entry.fragment.ts';

/** The audit entries about one account and its keys, newest first. */
export const ACCOUNT_AUDIT_QUERY: TypedDocumentNode<{ account: { id: string; auditLog: AuditPage } | null }, { id: string; first?: number; after?: string | null }> = gql`
  query AccountAudit($id: ID!, $first: Int, $after: String) {
    account(id: $id) {
      id
      auditLog(first: $first, after: $after) {
        nodes {
          ...AuditEntryFragment
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
  ${AUDIT_ENTRY_FRAGMENT}
`;
