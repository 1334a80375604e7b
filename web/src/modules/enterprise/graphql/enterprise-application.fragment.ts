import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export type EnterpriseApplicationKind = 'commercial' | 'enterprise';
export type EnterpriseApplicationState = 'pending_review' | 'approved' | 'rejected' | 'withdrawn';

/** One entry of an application's timeline: a state it entered, who moved it there, and their note. */
export interface EnterpriseApplicationEventFragment {
  at: string;
  state: EnterpriseApplicationState;
  /** Who acted: the applicant, a staff member, or nobody (svc itself, e.g. a commercial auto-approval). */
  actorEmail: string | null;
  note: string | null;
}

/** An application as its applicant and staff see it. */
export interface EnterpriseApplicationFragment {
  id: string;
  kind: EnterpriseApplicationKind;
  state: EnterpriseApplicationState;
  organisation: string;
  contactEmail: string;
  website: string | null;
  country: string;
  useCase: string;
  expectedMonthlyTokens: number;
  autoApproved: boolean;
  submittedAt: string;
  decidedAt: string | null;
  organisationId: string | null;
  timeline: EnterpriseApplicationEventFragment[];
}

export const ENTERPRISE_APPLICATION_FRAGMENT: TypedDocumentNode<EnterpriseApplicationFragment> = gql`
  fragment EnterpriseApplicationFragment on EnterpriseApplication {
    id
    kind
    state
    organisation
    contactEmail
    website
    country
    useCase
    expectedMonthlyTokens
    autoApproved
    submittedAt
    decidedAt
    organisationId
    timeline {
      at
      state
      actorEmail
      note
    }
  }
`;
