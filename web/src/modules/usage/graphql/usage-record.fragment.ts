import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { MONEY_FRAGMENT, type MoneyFragment } from '../../money/graphql/money.fragment.ts';
import type { ModelClass } from '../../plan/graphql/plan-package.fragment.ts';

export type UsageStatus = 'ok' | 'refunded' | 'client_disconnected' | 'upstream_failed' | 'abandoned';
export type UsageProduct = 'chat' | 'search' | 'image' | 'speech' | 'music' | 'embedding';
/** What a product produces besides tokens (GraphQL `MeterUnit`). */
export type MeterUnit = 'image' | 'audio_second' | 'search';

/** The API key a request was made with, as lists show it. */
export interface UsageKeyFragment {
  id: string;
  kind: 'personal' | 'enterprise';
  name: string;
  prefix: string;
  last4: string;
  revoked: boolean;
}

export interface UsageRecordFragment {
  requestId: string;
  clientRequestId: string | null;
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
  credentialKind: string;
  key: UsageKeyFragment | null;
  durationSeconds: number;
  refunded: boolean;
  errorCode: string | null;
  errorStage: string | null;
  upstreamStatus: number | null;
  deployment: string | null;
  clientIp: string | null;
  payerId: string;
  payerKind: string;
}

export const USAGE_RECORD_FRAGMENT: TypedDocumentNode<UsageRecordFragment> = gql`
  fragment UsageRecordFragment on UsageRecord {
    requestId
    clientRequestId
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
    credentialKind
    key {
      id
      kind
      name
      prefix
      last4
      revoked
    }
    durationSeconds
    refunded
    errorCode
    errorStage
    upstreamStatus
    deployment
    clientIp
    payerId
    payerKind
  }
  ${MONEY_FRAGMENT}
`;
