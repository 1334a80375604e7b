import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import type { MoneyFields } from '../../credit/graphql/credit.fragment.ts';

export interface StatementUsage {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cost: MoneyFields;
}

export interface StatementPayment {
  orderId: string;
  packageId: string;
  kind: 'package' | 'credit';
  provider: string;
  state: string;
  amount: MoneyFields;
  paidAt: string | null;
  refundedAt: string | null;
}

export interface OrganisationStatement {
  number: string;
  month: string;
  periodStart: string;
  lastDay: string;
  timezone: string;
  currency: string;
  complete: boolean;
  generatedAt: string;
  organisation: { id: string; name: string; packageId: string; contactEmail: string | null; website: string | null; country: string | null; ownerEmail: string | null };
  usageByModel: { model: string; usage: StatementUsage }[];
  usageByKey: { credentialKind: string; keyId: string | null; name: string | null; prefix: string | null; last4: string | null; revoked: boolean; usage: StatementUsage }[];
  usageTotal: StatementUsage;
  payments: StatementPayment[];
  refunds: StatementPayment[];
  paymentTotals: { currency: string; paid: MoneyFields; refunded: MoneyFields; net: MoneyFields }[];
  credit: { opening: MoneyFields; closing: MoneyFields; movements: { kind: 'purchase' | 'code' | 'spend' | 'refund' | 'adjustment'; entries: number; amount: MoneyFields }[] } | null;
}

/** One organisation's statement for a month (YYYY-MM). */
export const ORGANISATION_STATEMENT_QUERY: TypedDocumentNode<{ organisationStatement: OrganisationStatement }, { organisationId: string; month: string }> = gql`
  fragment StatementMoneyFragment on Money {
    amountMicros
    amount
    currency
  }
  fragment StatementUsageFragment on StatementUsage {
    requests
    inputTokens
    outputTokens
    cost {
      ...StatementMoneyFragment
    }
  }
  fragment StatementPaymentFragment on StatementPayment {
    orderId
    packageId
    kind
    provider
    state
    amount {
      ...StatementMoneyFragment
    }
    paidAt
    refundedAt
  }
  query OrganisationStatement($organisationId: ID!, $month: String!) {
    organisationStatement(organisationId: $organisationId, month: $month) {
      number
      month
      periodStart
      lastDay
      timezone
      currency
      complete
      generatedAt
      organisation {
        id
        name
        packageId
        contactEmail
        website
        country
        ownerEmail
      }
      usageByModel {
        model
        usage {
          ...StatementUsageFragment
        }
      }
      usageByKey {
        credentialKind
        keyId
        name
        prefix
        last4
        revoked
        usage {
          ...StatementUsageFragment
        }
      }
      usageTotal {
        ...StatementUsageFragment
      }
      payments {
        ...StatementPaymentFragment
      }
      refunds {
        ...StatementPaymentFragment
      }
      paymentTotals {
        currency
        paid {
          ...StatementMoneyFragment
        }
        refunded {
          ...StatementMoneyFragment
        }
        net {
          ...StatementMoneyFragment
        }
      }
      credit {
        opening {
          ...StatementMoneyFragment
        }
        closing {
          ...StatementMoneyFragment
        }
        movements {
          kind
          entries
          amount {
            ...StatementMoneyFragment
          }
        }
      }
    }
  }
`;
