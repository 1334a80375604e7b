import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { MONEY_FRAGMENT, type MoneyFragment } from '../../money/graphql/money.fragment.ts';
import type { ModelClass } from '../../plan/graphql/plan-package.fragment.ts';

export type UsageStatus = 'ok' | 'refunded' | 'client_disconnected' | 'upstream_failed' | 'abandoned';
export type UsageProduct = 'chat' | 'search' | 'image' | 'speech' | 'music';
/** What a product produces besides tokens (GraphQL `MeterUnit`). */
export type MeterUnit = 'image' | 'audio_second' | 'search';

export interface UsageRecordFragment {
  requestId: string;
  createdAt: string;
  model: string;
  routedModel: string;
  class: ModelClass;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  estimated: boolean;
  cost: MoneyFragment;
  status: UsageStatus;
  latencyMs: number;
  channel: string;
  product: UsageProduct;
  unit: MeterUnit | null;
  unitQuantity: number | null;
}

export const USAGE_RECORD_FRAGMENT: TypedDocumentNode<UsageRecordFragment> = gql`
  fragment UsageRecordFragment on UsageRecord {
    requestId
    createdAt
    model
    routedModel
    class
    stream
    inputTokens
    outputTokens
    estimated
    cost {
      ...MoneyFragment
    }
    status
    latencyMs
    channel
    product
    unit
    unitQuantity
  }
  ${MONEY_FRAGMENT}
`;
