import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export const BUY_CREDIT: TypedDocumentNode<{ buyCredit: { order: { id: string }; payUrl: string | null } }, { amount: string; provider: string; organisationId?: string | null }> = gql`
  mutation BuyCredit($amount: String!, $provider: PaymentProvider!, $organisationId: ID) {
    buyCredit(amount: $amount, provider: $provider, organisationId: $organisationId) {
      order {
        id
      }
      payUrl
    }
  }
`;
