import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { USAGE_RECORD_FRAGMENT, type UsageRecordFragment } from '../../usage/graphql/usage-record.fragment.ts';
import { USAGE_FRAGMENT, type UsageFragment } from '../../usage/graphql/usage.fragment.ts';
import { ORGANISATION_CONNECTION_FRAGMENT, type OrganisationConnectionFragment } from './organisation-connection.fragment.ts';
import { ORGANISATION_INVITATION_FRAGMENT, type OrganisationInvitationFragment } from './organisation-invitation.fragment.ts';
import { ORGANISATION_KEY_FRAGMENT, type OrganisationKeyFragment } from './organisation-key.fragment.ts';
import { ORGANISATION_MEMBER_FRAGMENT, type OrganisationMemberFragment } from './organisation-member.fragment.ts';
import { ORGANISATION_FRAGMENT, type OrganisationFragment } from './organisation.fragment.ts';

export interface OrganisationConsole extends OrganisationFragment {
  keys: OrganisationKeyFragment[];
  connections: OrganisationConnectionFragment[];
  members: OrganisationMemberFragment[];
  /** Emails invited that have not signed up yet. */
  invitations: OrganisationInvitationFragment[];
  usage: UsageFragment;
  usageHistory: { nodes: UsageRecordFragment[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
}

export interface OrganisationConsoleQuery {
  organisation: OrganisationConsole | null;
}

/** Everything the console shows for one organisation. The page size is a variable (the cost limit counts a literal). */
export const ORGANISATION_CONSOLE_QUERY: TypedDocumentNode<OrganisationConsoleQuery, { id: string; requests: number }> = gql`
  query OrganisationConsole($id: ID!, $requests: Int!) {
    organisation(id: $id) {
      ...OrganisationFragment
      keys {
        ...OrganisationKeyFragment
      }
      connections {
        ...OrganisationConnectionFragment
      }
      members {
        ...OrganisationMemberFragment
      }
      invitations {
        ...OrganisationInvitationFragment
      }
      usage {
        ...UsageFragment
      }
      usageHistory(first: $requests) {
        nodes {
          ...UsageRecordFragment
        }
        pageInfo {
          hasNextPage
          endCursor
        }
      }
    }
  }
  ${ORGANISATION_FRAGMENT}
  ${ORGANISATION_KEY_FRAGMENT}
  ${ORGANISATION_CONNECTION_FRAGMENT}
  ${ORGANISATION_MEMBER_FRAGMENT}
  ${ORGANISATION_INVITATION_FRAGMENT}
  ${USAGE_FRAGMENT}
  ${USAGE_RECORD_FRAGMENT}
`;
