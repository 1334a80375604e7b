import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface AccountFragment {
  id: string;
  email: string;
  displayName: string | null;
  role: 'member' | 'support' | 'admin';
  planPackage: string;
  emailVerified: boolean;
  hasPassword: boolean;
  createdAt: string;
  /** The language the member picked (en, zh-CN), or null to follow the browser. */
  locale: string | null;
}

export const ACCOUNT_FRAGMENT: TypedDocumentNode<AccountFragment> = gql`
  fragment AccountFragment on Account {
    id
    email
    displayName
    role
    planPackage
    emailVerified
    hasPassword
    createdAt
    locale
  }
`;
