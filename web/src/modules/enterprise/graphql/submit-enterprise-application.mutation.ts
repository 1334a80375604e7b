import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ENTERPRISE_APPLICATION_FRAGMENT, type EnterpriseApplicationFragment } from './enterprise-application.fragment.ts';

/** What the applicant fills in: the application's own fields, before staff or the server add theirs. */
export type EnterpriseApplicationInput = Pick<
  EnterpriseApplicationFragment,
  'kind' | 'organisation' | 'contactEmail' | 'website' | 'country' | 'useCase' | 'expectedMonthlyTokens'
>;

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
