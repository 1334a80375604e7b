import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import {
  ENTERPRISE_APPLICATION_FRAGMENT,
  type EnterpriseApplicationFragment,
  type EnterpriseApplicationState,
} from '../../enterprise/graphql/enterprise-application.fragment.ts';

export interface ReviewApplication extends EnterpriseApplicationFragment {
  applicant: { id: string; email: string; createdAt: string; planPackage: string } | null;
}

export interface EnterpriseApplicationsQuery {
  enterpriseApplications: { nodes: ReviewApplication[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
}

/** The review queue (staff): applications in one state, pending ones oldest first. */
export const ENTERPRISE_APPLICATIONS_QUERY: TypedDocumentNode<
  EnterpriseApplicationsQuery,
  { state: EnterpriseApplicationState | null; first: number; after?: string | null }
> = gql`
  query EnterpriseApplications($state: EnterpriseApplicationState, $first: Int!, $after: String) {
    enterpriseApplications(state: $state, first: $first, after: $after) {
      nodes {
        ...EnterpriseApplicationFragment
        applicant {
          id
          email
          createdAt
          planPackage
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
  ${ENTERPRISE_APPLICATION_FRAGMENT}
`;
