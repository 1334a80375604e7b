import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ALERT_DELIVERY_FRAGMENT, type AlertDeliveryFragment } from './alert-delivery.fragment.ts';

export const ALERT_DELIVERIES_QUERY: TypedDocumentNode<{ alertDeliveries: AlertDeliveryFragment[] }, { organisationId?: string | null }> = gql`
  query AlertDeliveries($organisationId: ID) {
    alertDeliveries(organisationId: $organisationId, first: 50) {
      ...AlertDeliveryFragment
    }
  }
  ${ALERT_DELIVERY_FRAGMENT}
`;
