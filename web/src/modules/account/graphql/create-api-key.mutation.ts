import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { API_KEY_FRAGMENT, type ApiKeyFragment } from './api-key.fragment.ts';

/** The only response that ever carries the full token. */
export const CREATE_API_KEY: TypedDocumentNode<{ createApiKey: { token: string; key: ApiKeyFragment } }, { name: string }> = gql`
  mutation CreateApiKey($name: String!) {
    createApiKey(name: $name) {
      token
      key {
        ...ApiKeyFragment
      }
    }
  }
  ${API_KEY_FRAGMENT}
`;
