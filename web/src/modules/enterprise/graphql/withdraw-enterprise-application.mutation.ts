import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ENTERPRISE_APPLICATION_FRAGMENT, type EnterpriseApplicationFragment } from './enterprise-application.fragment.ts';

/** Only while pending, and only by the applicant. */
export const WITHDRAW_ENTERPRISE_APPLICATION: TypedDocumentNode<{ withdrawEnterpriseApplication: EnterpriseApplicationFragment }, { id: string }> = gql`
  mutation WithdrawEnterpriseApplication($id: ID!) {
    withdrawEnterpriseApplication(id: $id) {
      ...EnterpriseApplicationFragment
    }
  }
  ${ENTERPRISE_APPLICATION_FRAGMENT}
`;
