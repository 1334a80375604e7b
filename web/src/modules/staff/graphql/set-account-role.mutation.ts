import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { STAFF_ACCOUNT_FRAGMENT, type AccountRole, type StaffAccountFragment } from './staff-account.fragment.ts';

/** Admins only: the server refuses everyone else. */
export const SET_ACCOUNT_ROLE: TypedDocumentNode<{ setAccountRole: StaffAccountFragment }, { accountId: string; role: AccountRole; reason: string | null }> = gql`
  mutation SetAccountRole($accountId: ID!, $role: AccountRole!, $reason: String) {
    setAccountRole(accountId: $accountId, role: $role, reason: $reason) {
      ...StaffAccountFragment
    }
  }
  ${STAFF_ACCOUNT_FRAGMENT}
`;
