import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

/** One address a key was used from: the socket peer, or X-Forwarded-For from a trusted proxy. */
export interface OrganisationConnectionFragment {
  keyId: string;
  keyName: string;
  keyPrefix: string;
  ip: string;
  firstSeenAt: string;
  lastSeenAt: string;
  requestCount: number;
}

export const ORGANISATION_CONNECTION_FRAGMENT: TypedDocumentNode<OrganisationConnectionFragment> = gql`
  fragment OrganisationConnectionFragment on OrganisationConnection {
    keyId
    keyName
    keyPrefix
    ip
    firstSeenAt
    lastSeenAt
    requestCount
  }
`;
