import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { STAFF_ACCOUNT_FRAGMENT, type StaffAccountFragment } from './staff-account.fragment.ts';

export const SET_ACCOUNT_PACKAGE: TypedDocumentNode<
  { setAccountPackage: StaffAccountFragment },
  { accountId: string; packageId: string; reason: string; until: string | null }
> = gql`
  mutation SetAccountPackage($accountId: ID!, $packageId: ID!, $reason: String!, $until: DateTime) {
    setAccountPackage(accountId: $accountId, packageId: $packageId, reason: $reason, until: $until) {
      ...StaffAccountFragment
    }
  }
  ${STAFF_ACCOUNT_FRAGMENT}
`;
