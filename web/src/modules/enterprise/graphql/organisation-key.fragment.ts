import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

/** An `svc_ent_` key: never the token itself, only how to recognise it. */
export interface OrganisationKeyFragment {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  /** CIDRs the key is accepted from; empty means anywhere. */
  allowedCidrs: string[];
}

export const ORGANISATION_KEY_FRAGMENT: TypedDocumentNode<OrganisationKeyFragment> = gql`
  fragment OrganisationKeyFragment on OrganisationKey {
    id
    name
    prefix
    last4
    createdAt
    lastUsedAt
    allowedCidrs
  }
`;
