import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';

export type EnterpriseApplicationKind = 'commercial' | 'enterprise';
export type EnterpriseApplicationState = 'pending_review' | 'approved' | 'rejected' | 'withdrawn';

export type EnterpriseApplicationAction = 'submitted' | 'approved' | 'rejected' | 'withdrawn';
export type EnterpriseApplicationActorKind = 'applicant' | 'staff' | 'system';

/** One entry of an application's timeline: what happened, who did it (svc itself for an auto-approval), their note. */
export interface EnterpriseApplicationEventFragment {
  id: string;
  at: string;
  action: EnterpriseApplicationAction;
  actorKind: EnterpriseApplicationActorKind;
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
  /** The approval note or the rejection reason, shown to the applicant. */
  decisionNote: string | null;
  packageId: string | null;
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
    decisionNote
    packageId
    organisationId
    timeline {
      id
      at
      action
      actorKind
      actorEmail
      note
    }
  }
`;
