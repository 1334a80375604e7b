import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { COST_BREAKDOWN_FRAGMENT, type RequestPricing } from '../../usage/graphql/cost-breakdown.fragment.ts';
import { USAGE_RECORD_FRAGMENT, type UsageRecordFragment } from '../../usage/graphql/usage-record.fragment.ts';

export interface StaffRequest extends UsageRecordFragment, RequestPricing {
  payer: { id: string; email: string; kind: 'person' | 'organisation'; displayName: string | null } | null;
}

export interface StaffRequestQuery {
  request: StaffRequest | null;
}

/** Staff: any account's request by the id its reply carried, with the account (or organisation) that paid. */
export const STAFF_REQUEST_QUERY: TypedDocumentNode<StaffRequestQuery, { requestId: string }> = gql`
  query StaffRequest($requestId: String!) {
    request(requestId: $requestId) {
      ...UsageRecordFragment
      pricing {
        ...CostBreakdownFragment
      }
      payer {
        id
        email
        kind
        displayName
      }
    }
  }
  ${USAGE_RECORD_FRAGMENT}
  ${COST_BREAKDOWN_FRAGMENT}
`;
