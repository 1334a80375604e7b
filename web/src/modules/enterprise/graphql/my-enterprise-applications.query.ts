import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ENTERPRISE_APPLICATION_FRAGMENT, type EnterpriseApplicationFragment } from './enterprise-application.fragment.ts';

export interface MyEnterpriseApplicationsQuery {
  myEnterpriseApplications: EnterpriseApplicationFragment[];
}

/** The signed-in member's applications, newest first. */
export const MY_ENTERPRISE_APPLICATIONS_QUERY: TypedDocumentNode<MyEnterpriseApplicationsQuery, Record<string, never>> = gql`
  query MyEnterpriseApplications {
    myEnterpriseApplications {
      ...EnterpriseApplicationFragment
    }
  }
  ${ENTERPRISE_APPLICATION_FRAGMENT}
`;
