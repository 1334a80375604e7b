import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { STAFF_ACCOUNT_FRAGMENT, type StaffAccountFragment } from './staff-account.fragment.ts';

export const DISABLE_ACCOUNT: TypedDocumentNode<{ disableAccount: StaffAccountFragment }, { id: string; reason: string }> = gql`
  mutation DisableAccount($id: ID!, $reason: String!) {
    disableAccount(id: $id, reason: $reason) {
      ...StaffAccountFragment
    }
  }
  ${STAFF_ACCOUNT_FRAGMENT}
`;
