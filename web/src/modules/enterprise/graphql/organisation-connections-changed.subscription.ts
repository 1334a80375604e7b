import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_CONNECTION_FRAGMENT, type OrganisationConnectionFragment } from './organisation-connection.fragment.ts';

export interface OrganisationConnectionsChangedSubscription {
  organisationConnectionsChanged: OrganisationConnectionFragment[];
}

/** The organisation's connecting IPs, pushed whenever a flush changes them (at most every second). */
export const ORGANISATION_CONNECTIONS_CHANGED_SUBSCRIPTION: TypedDocumentNode<OrganisationConnectionsChangedSubscription, { organisationId: string }> = gql`
  subscription OrganisationConnectionsChanged($organisationId: ID!) {
    organisationConnectionsChanged(organisationId: $organisationId) {
      ...OrganisationConnectionFragment
    }
  }
  ${ORGANISATION_CONNECTION_FRAGMENT}
`;
