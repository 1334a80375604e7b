import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { DEVICE_AUTHORIZATION_FRAGMENT, type DeviceAuthorizationFragment } from './device-authorization.fragment.ts';

export const APPROVE_DEVICE: TypedDocumentNode<{ approveDevice: DeviceAuthorizationFragment }, { userCode: string }> = gql`
  mutation ApproveDevice($userCode: String!) {
    approveDevice(userCode: $userCode) {
      ...DeviceAuthorizationFragment
    }
  }
  ${DEVICE_AUTHORIZATION_FRAGMENT}
`;
