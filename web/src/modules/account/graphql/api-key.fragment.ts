import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface ApiKeyFragment {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export const API_KEY_FRAGMENT: TypedDocumentNode<ApiKeyFragment> = gql`
  fragment ApiKeyFragment on ApiKey {
    id
    name
    prefix
    last4
    createdAt
    lastUsedAt
  }
`;
