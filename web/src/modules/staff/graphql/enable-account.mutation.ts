import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { STAFF_ACCOUNT_FRAGMENT, type StaffAccountFragment } from './staff-account.fragment.ts';

export const ENABLE_ACCOUNT: TypedDocumentNode<{ enableAccount: StaffAccountFragment }, { id: string; reason: string | null }> = gql`
  mutation EnableAccount($id: ID!, $reason: String) {
    enableAccount(id: $id, reason: $reason) {
      ...StaffAccountFragment
    }
  }
  ${STAFF_ACCOUNT_FRAGMENT}
`;
