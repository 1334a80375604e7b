import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ALERT_NOTICES_FRAGMENT, type AlertNoticesFragment } from './alert-notices.fragment.ts';

export const MARK_ALERT_NOTICES_READ: TypedDocumentNode<{ markAlertNoticesRead: AlertNoticesFragment }, Record<string, never>> = gql`
  mutation MarkAlertNoticesRead {
    markAlertNoticesRead {
      ...AlertNoticesFragment
    }
  }
  ${ALERT_NOTICES_FRAGMENT}
`;
