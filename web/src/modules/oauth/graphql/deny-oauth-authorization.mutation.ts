import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import type { OAuthDecision } from './approve-oauth-authorization.mutation.ts';
import { OAUTH_AUTHORIZATION_REQUEST_FRAGMENT } from './oauth-authorization-request.fragment.ts';

export const DENY_OAUTH_AUTHORIZATION: TypedDocumentNode<{ denyOAuthAuthorization: OAuthDecision }, { id: string }> = gql`
  mutation DenyOAuthAuthorization($id: ID!) {
    denyOAuthAuthorization(id: $id) {
      redirectTo
      request {
        ...OAuthAuthorizationRequestFragment
      }
    }
  }
  ${OAUTH_AUTHORIZATION_REQUEST_FRAGMENT}
`;
