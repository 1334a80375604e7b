import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export interface DeviceAuthorizationFragment {
  userCode: string;
  clientName: string;
  state: 'pending' | 'approved' | 'denied' | 'expired';
  createdAt: string;
  expiresAt: string;
}

export const DEVICE_AUTHORIZATION_FRAGMENT: TypedDocumentNode<DeviceAuthorizationFragment> = gql`
  fragment DeviceAuthorizationFragment on DeviceAuthorization {
    userCode
    clientName
    state
    createdAt
    expiresAt
  }
`;
