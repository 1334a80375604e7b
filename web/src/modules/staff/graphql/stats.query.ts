import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { MONEY_FRAGMENT, type MoneyFragment } from '../../money/graphql/money.fragment.ts';
import type { UsageStatus } from '../../usage/graphql/usage-record.fragment.ts';

export type StatsRange = 'last_7_days' | 'last_30_days' | 'last_90_days';

export interface StatsFigures {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  spend: MoneyFragment;
  errors: number;
  refunds: number;
}

export interface StatsRevenue {
  currency: string;
  paidAmount: string;
  paidOrders: number;
  refundedAmount: string;
  refundedOrders: number;
}

export interface StatsQuery {
  stats: {
    range: StatsRange;
    days: number;
    timezone: string;
    currency: string;
    totals: StatsFigures;
    byDay: (StatsFigures & { date: string })[];
    byModel: (StatsFigures & { model: string })[];
    byStatus: { status: UsageStatus; requests: number }[];
    revenue: StatsRevenue[];
  };
}

/**
 * The dashboard: ledger figures by day and by model, and revenue (the review queue is `REVIEW_QUEUE_QUERY`, kept live). The figures are
 * spelled out per type rather than as a fragment on the `StatsFigures` interface, which Apollo's cache
 * cannot match without a possibleTypes map.
 */
export const STATS_QUERY: TypedDocumentNode<StatsQuery, { range: StatsRange }> = gql`
  query Stats($range: StatsRange!) {
    stats(range: $range) {
      range
      days
      timezone
      currency
      totals {
        requests
        inputTokens
        outputTokens
        spend {
          ...MoneyFragment
        }
        errors
        refunds
      }
      byDay {
        date
        requests
        inputTokens
        outputTokens
        spend {
          ...MoneyFragment
        }
        errors
        refunds
      }
      byModel {
        model
        requests
        inputTokens
        outputTokens
        spend {
          ...MoneyFragment
        }
        errors
        refunds
      }
      byStatus {
        status
        requests
      }
      revenue {
        currency
        paidAmount
        paidOrders
        refundedAmount
        refundedOrders
      }
    }
  }
  ${MONEY_FRAGMENT}
`;
