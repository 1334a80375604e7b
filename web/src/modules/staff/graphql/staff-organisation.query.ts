import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ORGANISATION_CONNECTION_FRAGMENT, type OrganisationConnectionFragment } from '../../enterprise/graphql/organisation-connection.fragment.ts';
import { ORGANISATION_INVITATION_FRAGMENT, type OrganisationInvitationFragment } from '../../enterprise/graphql/organisation-invitation.fragment.ts';
import { ORGANISATION_KEY_FRAGMENT, type OrganisationKeyFragment } from '../../enterprise/graphql/organisation-key.fragment.ts';
import { ORGANISATION_MEMBER_FRAGMENT, type OrganisationMemberFragment } from '../../enterprise/graphql/organisation-member.fragment.ts';
import { ORGANISATION_FRAGMENT, type OrganisationFragment } from '../../enterprise/graphql/organisation.fragment.ts';

export interface StaffOrganisation extends OrganisationFragment {
  members: OrganisationMemberFragment[];
  invitations: OrganisationInvitationFragment[];
  keys: OrganisationKeyFragment[];
  connections: OrganisationConnectionFragment[];
}

export interface StaffOrganisationQuery {
  organisation: StaffOrganisation | null;
}

/** Staff: an organisation account's members, keys and connecting addresses (its pools and requests are the account page's own). */
export const STAFF_ORGANISATION_QUERY: TypedDocumentNode<StaffOrganisationQuery, { id: string }> = gql`
  query StaffOrganisation($id: ID!) {
    organisation(id: $id) {
      ...OrganisationFragment
      members {
        ...OrganisationMemberFragment
      }
      invitations {
        ...OrganisationInvitationFragment
      }
      keys {
        ...OrganisationKeyFragment
      }
      connections {
        ...OrganisationConnectionFragment
      }
    }
  }
  ${ORGANISATION_FRAGMENT}
  ${ORGANISATION_MEMBER_FRAGMENT}
  ${ORGANISATION_INVITATION_FRAGMENT}
  ${ORGANISATION_KEY_FRAGMENT}
  ${ORGANISATION_CONNECTION_FRAGMENT}
`;
