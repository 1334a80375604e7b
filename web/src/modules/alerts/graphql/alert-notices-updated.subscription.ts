import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ALERT_NOTICES_FRAGMENT, type AlertNoticesFragment } from './alert-notices.fragment.ts';

/** Your notices now, and again whenever one arrives on any instance. */
export const ALERT_NOTICES_UPDATED: TypedDocumentNode<{ alertNoticesUpdated: AlertNoticesFragment }, Record<string, never>> = gql`
  subscription AlertNoticesUpdated {
    alertNoticesUpdated {
      ...AlertNoticesFragment
    }
  }
  ${ALERT_NOTICES_FRAGMENT}
`;
