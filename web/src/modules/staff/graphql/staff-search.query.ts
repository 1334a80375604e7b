import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { MONEY_FRAGMENT, type MoneyFragment } from '../../money/graphql/money.fragment.ts';
import type { UsageKeyFragment, UsageStatus } from '../../usage/graphql/usage-record.fragment.ts';
import { STAFF_ACCOUNT_FRAGMENT, type StaffAccountFragment } from './staff-account.fragment.ts';

export type SearchHitKind = 'account' | 'organisation' | 'api_key' | 'request' | 'order' | 'application';
export type SearchMatch = 'id' | 'email' | 'email_domain' | 'organisation_name' | 'key' | 'key_prefix' | 'request_id' | 'client_request_id' | 'order_id' | 'trade_number';
export type SearchShape = 'id' | 'key' | 'request' | 'order' | 'email' | 'domain' | 'text';

export interface SearchHit {
  kind: SearchHitKind;
  id: string;
  matched: SearchMatch;
  organisationName: string | null;
  account: (StaffAccountFragment & { kind: 'person' | 'organisation' }) | null;
  key: UsageKeyFragment | null;
  request: { requestId: string; createdAt: string; model: string; status: UsageStatus; cost: MoneyFragment } | null;
  order: { id: string; state: string; packageId: string; provider: string; amount: string; currency: string; createdAt: string } | null;
  application: { id: string; organisation: string; state: string; kind: string; createdAt: string } | null;
}

export interface StaffSearchQuery {
  staffSearch: { query: string; shape: SearchShape; truncated: boolean; hits: SearchHit[] };
}

/** The admin app's one search box: accounts, organisations, keys, requests, orders and applications by what was typed. */
export const STAFF_SEARCH_QUERY: TypedDocumentNode<StaffSearchQuery, { query: string }> = gql`
  query StaffSearch($query: String!) {
    staffSearch(query: $query) {
      query
      shape
      truncated
      hits {
        kind
        id
        matched
        organisationName
        account {
          ...StaffAccountFragment
          kind
        }
        key {
          id
          kind
          name
          prefix
          last4
          revoked
        }
        request {
          requestId
          createdAt
          model
          status
          cost {
            ...MoneyFragment
          }
        }
        order {
          id
          state
          packageId
          provider
          amount
          currency
          createdAt
        }
        application {
          id
          organisation
          state
          kind
          createdAt
        }
      }
    }
  }
  ${STAFF_ACCOUNT_FRAGMENT}
  ${MONEY_FRAGMENT}
`;
