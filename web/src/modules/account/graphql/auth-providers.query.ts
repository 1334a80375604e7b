import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface AuthProvidersQuery {
  authProviders: { password: boolean; emailCode: boolean; mailDelivery: 'smtp' | 'outbox' | 'log' | 'unavailable'; mailLogged: boolean; oidcLabel: string | null };
}

export const AUTH_PROVIDERS_QUERY: TypedDocumentNode<AuthProvidersQuery, Record<string, never>> = gql`
  query AuthProviders {
    authProviders {
      password
      emailCode
      mailDelivery
      mailLogged
      oidcLabel
    }
  }
`;
