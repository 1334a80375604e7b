import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ENTERPRISE_APPLICATION_FRAGMENT, type EnterpriseApplicationFragment } from '../../enterprise/graphql/enterprise-application.fragment.ts';

/** Creates the organisation (the applicant its owner) on the package given, else the configured default. */
export const APPROVE_ENTERPRISE_APPLICATION: TypedDocumentNode<
  { approveEnterpriseApplication: EnterpriseApplicationFragment },
  { id: string; note: string | null; packageId: string | null }
> = gql`
  mutation ApproveEnterpriseApplication($id: ID!, $note: String, $packageId: ID) {
    approveEnterpriseApplication(id: $id, note: $note, packageId: $packageId) {
      ...EnterpriseApplicationFragment
    }
  }
  ${ENTERPRISE_APPLICATION_FRAGMENT}
`;
