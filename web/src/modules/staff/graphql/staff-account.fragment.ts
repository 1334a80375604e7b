import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export type AccountRole = 'member' | 'support' | 'admin';

/** An account as the staff lists and headers show it. */
export interface StaffAccountFragment {
  id: string;
  email: string;
  displayName: string | null;
  role: AccountRole;
  planPackage: string;
  planPackageUntil: string | null;
  disabled: boolean;
  disabledAt: string | null;
  emailVerified: boolean;
  hasPassword: boolean;
  createdAt: string;
}

export const STAFF_ACCOUNT_FRAGMENT: TypedDocumentNode<StaffAccountFragment> = gql`
  fragment StaffAccountFragment on Account {
    id
    email
    displayName
    role
    planPackage
    planPackageUntil
    disabled
    disabledAt
    emailVerified
    hasPassword
    createdAt
  }
`;
