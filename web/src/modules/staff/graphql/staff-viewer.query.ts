import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface StaffViewer {
  id: string;
  email: string;
  role: 'member' | 'support' | 'admin';
  viewerCanManageAccounts: boolean;
  viewerCanReadAuditLog: boolean;
  viewerCanReviewApplications: boolean;
  viewerCanManageStaff: boolean;
}

export interface StaffViewerQuery {
  me: StaffViewer | null;
}

/** Who is signed in and what the admin app may show them (the server decides every right again). */
export const STAFF_VIEWER_QUERY: TypedDocumentNode<StaffViewerQuery, Record<string, never>> = gql`
  query StaffViewer {
    me {
      id
      email
      role
      viewerCanManageAccounts
      viewerCanReadAuditLog
      viewerCanReviewApplications
      viewerCanManageStaff
    }
  }
`;
