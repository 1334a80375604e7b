import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { STAFF_ACCOUNT_FRAGMENT, type StaffAccountFragment } from './staff-account.fragment.ts';

export interface AccountsQuery {
  accounts: {
    nodes: StaffAccountFragment[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}

export interface AccountsVariables {
  search?: string | null;
  first?: number;
  after?: string | null;
}

/** Accounts, newest first: all, one by id, or by part of the email. */
export const ACCOUNTS_QUERY: TypedDocumentNode<AccountsQuery, AccountsVariables> = gql`
  query Accounts($search: String, $first: Int, $after: String) {
    accounts(search: $search, first: $first, after: $after) {
      nodes {
        ...StaffAccountFragment
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
  ${STAFF_ACCOUNT_FRAGMENT}
`;
