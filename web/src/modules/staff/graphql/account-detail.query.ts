import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { API_KEY_FRAGMENT, type ApiKeyFragment } from '../../account/graphql/api-key.fragment.ts';
import { SESSION_FRAGMENT, type SessionFragment } from '../../account/graphql/session.fragment.ts';
import { USAGE_RECORD_FRAGMENT, type UsageRecordFragment } from '../../usage/graphql/usage-record.fragment.ts';
import { USAGE_FRAGMENT, type UsageFragment } from '../../usage/graphql/usage.fragment.ts';
import { STAFF_ACCOUNT_FRAGMENT, type StaffAccountFragment } from './staff-account.fragment.ts';

export interface AccountDetail extends StaffAccountFragment {
  /** An organisation's account has members and organisation keys instead of its own keys and sessions. */
  kind: 'person' | 'organisation';
  usage: UsageFragment;
  usageHistory: { nodes: UsageRecordFragment[]; pageInfo: { hasNextPage: boolean } };
  apiKeys: ApiKeyFragment[];
  sessions: SessionFragment[];
}

export interface AccountDetailQuery {
  account: AccountDetail | null;
}

/**
 * One account as support sees it: plan, pools, recent requests, keys and sessions. The page size is a
 * variable, as in `UsageHistory`: the server's cost limit multiplies a literal `first` into the cost.
 */
export const ACCOUNT_DETAIL_QUERY: TypedDocumentNode<AccountDetailQuery, { id: string; requests: number }> = gql`
  query AccountDetail($id: ID!, $requests: Int!) {
    account(id: $id) {
      ...StaffAccountFragment
      kind
      usage {
        ...UsageFragment
      }
      usageHistory(first: $requests) {
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
