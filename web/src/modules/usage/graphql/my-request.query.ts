import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { COST_BREAKDOWN_FRAGMENT, type RequestPricing } from './cost-breakdown.fragment.ts';
import { USAGE_RECORD_FRAGMENT, type UsageRecordFragment } from './usage-record.fragment.ts';

export interface MyRequestQuery {
  myRequest: (UsageRecordFragment & RequestPricing) | null;
}

/** One of the signed-in member's requests by the id its reply carried (x-request-id); null when it is not theirs. */
export const MY_REQUEST_QUERY: TypedDocumentNode<MyRequestQuery, { requestId: string }> = gql`
  query MyRequest($requestId: String!) {
    myRequest(requestId: $requestId) {
      ...UsageRecordFragment
      pricing {
        ...CostBreakdownFragment
      }
    }
  }
  ${USAGE_RECORD_FRAGMENT}
  ${COST_BREAKDOWN_FRAGMENT}
`;
