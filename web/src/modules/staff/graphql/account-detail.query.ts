import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { API_KEY_FRAGMENT, type ApiKeyFragment } from '../../account/graphql/api-key.fragment.ts';
import { SESSION_FRAGMENT, type SessionFragment } from '../../account/graphql/session.fragment.ts';
import { USAGE_RECORD_FRAGMENT, type UsageRecordFragment } from '../../usage/graphql/usage-record.fragment.ts';
import { USAGE_FRAGMENT, type UsageFragment } from '../../usage/graphql/usage.fragment.ts';
import { STAFF_ACCOUNT_FRAGMENT, type StaffAccountFragment } from './staff-account.fragment.ts';

export interface AccountDetail extends StaffAccountFragment {
  usage: UsageFragment;
  usageHistory: { nodes: UsageRecordFragment[]; pageInfo: { hasNextPage: boolean } };
  apiKeys: ApiKeyFragment[];
  sessions: SessionFragment[];
}

export interface AccountDetailQuery {
  account: AccountDetail | null;
}

/** One account as support sees it: plan, pools, recent requests, keys and sessions. */
export const ACCOUNT_DETAIL_QUERY: TypedDocumentNode<AccountDetailQuery, { id: string }> = gql`
  query AccountDetail($id: ID!) {
    account(id: $id) {
      ...StaffAccountFragment
      usage {
        ...UsageFragment
      }
      usageHistory(first: 15) {
        nodes {
          ...UsageRecordFragment
        }
        pageInfo {
          hasNextPage
        }
      }
      apiKeys {
        ...ApiKeyFragment
      }
      sessions {
        ...SessionFragment
      }
    }
  }
  ${STAFF_ACCOUNT_FRAGMENT}
  ${USAGE_FRAGMENT}
  ${USAGE_RECORD_FRAGMENT}
  ${API_KEY_FRAGMENT}
  ${SESSION_FRAGMENT}
`;
