import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface OAuthAuthorizationRequestFragment {
  id: string;
  clientName: string;
  clientUri: string | null;
  redirectHost: string;
  scope: string;
  state: 'pending' | 'approved' | 'denied' | 'expired';
  expiresAt: string;
}

export const OAUTH_AUTHORIZATION_REQUEST_FRAGMENT: TypedDocumentNode<OAuthAuthorizationRequestFragment> = gql`
  fragment OAuthAuthorizationRequestFragment on OAuthAuthorizationRequest {
    id
    clientName
    clientUri
    redirectHost
    scope
    state
    expiresAt
  }
`;
