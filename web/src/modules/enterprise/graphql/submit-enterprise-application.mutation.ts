import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ENTERPRISE_APPLICATION_FRAGMENT, type EnterpriseApplicationFragment, type EnterpriseApplicationKind } from './enterprise-application.fragment.ts';

export interface EnterpriseApplicationInput {
  kind: EnterpriseApplicationKind;
  organisation: string;
  contactEmail: string;
  website: string | null;
  country: string;
  useCase: string;
  expectedMonthlyTokens: number;
}

/** A commercial application comes back approved (and its organisation made); an enterprise one pending. */
export const SUBMIT_ENTERPRISE_APPLICATION: TypedDocumentNode<
  { submitEnterpriseApplication: EnterpriseApplicationFragment },
  { input: EnterpriseApplicationInput }
> = gql`
  mutation SubmitEnterpriseApplication($input: EnterpriseApplicationInput!) {
    submitEnterpriseApplication(input: $input) {
      ...EnterpriseApplicationFragment
    }
  }
  ${ENTERPRISE_APPLICATION_FRAGMENT}
`;
