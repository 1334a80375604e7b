import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface KeyMoney {
  amount: string;
  amountMicros: number;
  currency: string;
}

/** A key's own limits and its spend so far (personal and organisation keys alike). */
export interface KeyLimitsFragment {
  budgetDay: KeyMoney | null;
  budgetMonth: KeyMoney | null;
  requestsPerMinute: number | null;
  models: string[] | null;
  expiresAt: string | null;
  spentToday: KeyMoney;
  spentThisMonth: KeyMoney;
}

export interface ApiKeyFragment {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  limits: KeyLimitsFragment;
}

export const KEY_LIMITS_FRAGMENT: TypedDocumentNode<KeyLimitsFragment> = gql`
  fragment KeyLimitsFragment on KeyLimits {
    budgetDay {
      amount
      amountMicros
      currency
    }
    budgetMonth {
      amount
      amountMicros
      currency
    }
    requestsPerMinute
    models
    expiresAt
    spentToday {
      amount
      amountMicros
      currency
    }
    spentThisMonth {
      amount
      amountMicros
      currency
    }
  }
`;

export const API_KEY_FRAGMENT: TypedDocumentNode<ApiKeyFragment> = gql`
  fragment ApiKeyFragment on ApiKey {
    id
    name
    prefix
    last4
    createdAt
    lastUsedAt
    limits {
      ...KeyLimitsFragment
    }
  }
  ${KEY_LIMITS_FRAGMENT}
`;
