import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { OAUTH_AUTHORIZATION_REQUEST_FRAGMENT, type OAuthAuthorizationRequestFragment } from './oauth-authorization-request.fragment.ts';

export interface OAuthDecision {
  redirectTo: string;
  request: OAuthAuthorizationRequestFragment;
}

export const APPROVE_OAUTH_AUTHORIZATION: TypedDocumentNode<{ approveOAuthAuthorization: OAuthDecision }, { id: string }> = gql`
  mutation ApproveOAuthAuthorization($id: ID!) {
    approveOAuthAuthorization(id: $id) {
      redirectTo
      request {
        ...OAuthAuthorizationRequestFragment
      }
    }
  }
  ${OAUTH_AUTHORIZATION_REQUEST_FRAGMENT}
`;
