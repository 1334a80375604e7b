import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { OAUTH_AUTHORIZATION_REQUEST_FRAGMENT, type OAuthAuthorizationRequestFragment } from './oauth-authorization-request.fragment.ts';

export const OAUTH_AUTHORIZATION_REQUEST_QUERY: TypedDocumentNode<{ oauthAuthorizationRequest: OAuthAuthorizationRequestFragment }, { id: string }> = gql`
  query OAuthAuthorizationRequest($id: ID!) {
    oauthAuthorizationRequest(id: $id) {
      ...OAuthAuthorizationRequestFragment
    }
  }
  ${OAUTH_AUTHORIZATION_REQUEST_FRAGMENT}
`;
