import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ENTERPRISE_APPLICATION_FRAGMENT, type EnterpriseApplicationFragment } from './enterprise-application.fragment.ts';

export interface EnterpriseApplicationChangedSubscription {
  enterpriseApplicationChanged: EnterpriseApplicationFragment;
}

/** Applicants receive their own applications; staff receive every one (new, withdrawn, decided), from any instance. */
export const ENTERPRISE_APPLICATION_CHANGED_SUBSCRIPTION: TypedDocumentNode<EnterpriseApplicationChangedSubscription, Record<string, never>> = gql`
  subscription EnterpriseApplicationChanged {
    enterpriseApplicationChanged {
      ...EnterpriseApplicationFragment
    }
  }
  ${ENTERPRISE_APPLICATION_FRAGMENT}
`;
