import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ENTERPRISE_APPLICATION_FRAGMENT, type EnterpriseApplicationFragment } from '../../enterprise/graphql/enterprise-application.fragment.ts';

/** The reason is shown to the applicant. */
export const REJECT_ENTERPRISE_APPLICATION: TypedDocumentNode<{ rejectEnterpriseApplication: EnterpriseApplicationFragment }, { id: string; reason: string }> = gql`
  mutation RejectEnterpriseApplication($id: ID!, $reason: String!) {
    rejectEnterpriseApplication(id: $id, reason: $reason) {
      ...EnterpriseApplicationFragment
    }
  }
  ${ENTERPRISE_APPLICATION_FRAGMENT}
`;
