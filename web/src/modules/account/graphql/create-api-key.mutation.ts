import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { API_KEY_FRAGMENT, type ApiKeyFragment } from './api-key.fragment.ts';

/** What the keys page sends as a key's limits (GraphQL `KeyLimitsInput`): absent = unchanged, null = none. */
export interface KeyLimitsInput {
  budgetDay?: string | null;
  budgetMonth?: string | null;
  requestsPerMinute?: number | null;
  models?: string[] | null;
  expiresAt?: string | null;
}

/** The only response that ever carries the full token. */
export const CREATE_API_KEY: TypedDocumentNode<{ createApiKey: { token: string; key: ApiKeyFragment } }, { name: string; limits?: KeyLimitsInput }> = gql`
  mutation CreateApiKey($name: String!, $limits: KeyLimitsInput) {
    createApiKey(name: $name, limits: $limits) {
      token
      key {
        ...ApiKeyFragment
      }
    }
  }
  ${API_KEY_FRAGMENT}
`;
