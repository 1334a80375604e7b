import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ENTERPRISE_APPLICATION_FRAGMENT, type EnterpriseApplicationFragment } from '../../enterprise/graphql/enterprise-application.fragment.ts';
import { USAGE_FRAGMENT, type UsageFragment } from '../../usage/graphql/usage.fragment.ts';
import { STAFF_ACCOUNT_FRAGMENT, type StaffAccountFragment } from './staff-account.fragment.ts';

export interface ApplicationDetail extends EnterpriseApplicationFragment {
  /** Pending, and the viewer reviews and did not submit it. */
  viewerCanDecide: boolean;
  /** Null only if the account is gone. */
  applicant: (StaffAccountFragment & { usage: UsageFragment }) | null;
  /** The applicant's other applications, newest first. */
  otherApplications: EnterpriseApplicationFragment[];
}

export interface EnterpriseApplicationQuery {
  enterpriseApplication: ApplicationDetail | null;
}

/** One application for review: everything submitted, its timeline, and the applicant's account. */
export const ENTERPRISE_APPLICATION_QUERY: TypedDocumentNode<EnterpriseApplicationQuery, { id: string }> = gql`
  query EnterpriseApplication($id: ID!) {
    enterpriseApplication(id: $id) {
      ...EnterpriseApplicationFragment
      viewerCanDecide
      applicant {
        ...StaffAccountFragment
        usage {
          ...UsageFragment
        }
      }
      otherApplications {
        ...EnterpriseApplicationFragment
      }
    }
  }
  ${ENTERPRISE_APPLICATION_FRAGMENT}
  ${STAFF_ACCOUNT_FRAGMENT}
  ${USAGE_FRAGMENT}
`;
