import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ALERT_DELIVERY_FRAGMENT, type AlertDeliveryFragment } from './alert-delivery.fragment.ts';

export const SEND_TEST_ALERT: TypedDocumentNode<{ sendTestAlert: AlertDeliveryFragment }, { organisationId?: string | null }> = gql`
  mutation SendTestAlert($organisationId: ID) {
    sendTestAlert(organisationId: $organisationId) {
      ...AlertDeliveryFragment
    }
  }
  ${ALERT_DELIVERY_FRAGMENT}
`;
