import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { API_KEY_FRAGMENT, type ApiKeyFragment } from './api-key.fragment.ts';
import type { KeyLimitsInput } from './create-api-key.mutation.ts';

export const UPDATE_API_KEY: TypedDocumentNode<{ updateApiKey: ApiKeyFragment }, { id: string; limits: KeyLimitsInput }> = gql`
  mutation UpdateApiKey($id: ID!, $limits: KeyLimitsInput) {
    updateApiKey(id: $id, limits: $limits) {
      ...ApiKeyFragment
    }
  }
  ${API_KEY_FRAGMENT}
`;
