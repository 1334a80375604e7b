import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { DEVICE_AUTHORIZATION_FRAGMENT, type DeviceAuthorizationFragment } from './device-authorization.fragment.ts';

/** Opening a code claims it for this browser session (the first signed-in opener owns it). */
export const DEVICE_AUTHORIZATION_QUERY: TypedDocumentNode<{ deviceAuthorization: DeviceAuthorizationFragment }, { userCode: string }> = gql`
  query DeviceAuthorization($userCode: String!) {
    deviceAuthorization(userCode: $userCode) {
      ...DeviceAuthorizationFragment
    }
  }
  ${DEVICE_AUTHORIZATION_FRAGMENT}
`;
