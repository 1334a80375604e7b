import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { API_KEY_FRAGMENT, type ApiKeyFragment } from './api-key.fragment.ts';

export const API_KEYS_QUERY: TypedDocumentNode<{ apiKeys: ApiKeyFragment[] }, Record<string, never>> = gql`
  query ApiKeys {
    apiKeys {
      ...ApiKeyFragment
    }
  }
  ${API_KEY_FRAGMENT}
`;
