import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { DEVICE_AUTHORIZATION_FRAGMENT, type DeviceAuthorizationFragment } from './device-authorization.fragment.ts';

export const DENY_DEVICE: TypedDocumentNode<{ denyDevice: DeviceAuthorizationFragment }, { userCode: string }> = gql`
  mutation DenyDevice($userCode: String!) {
    denyDevice(userCode: $userCode) {
      ...DeviceAuthorizationFragment
    }
  }
  ${DEVICE_AUTHORIZATION_FRAGMENT}
`;
