import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ALERT_SETTINGS_FRAGMENT, type AlertSettingsFragment } from './alert-settings.fragment.ts';

export interface AlertSettingsQuery {
  alertSettings: AlertSettingsFragment;
}

export const ALERT_SETTINGS_QUERY: TypedDocumentNode<AlertSettingsQuery, { organisationId?: string | null }> = gql`
  query AlertSettings($organisationId: ID) {
    alertSettings(organisationId: $organisationId) {
      ...AlertSettingsFragment
    }
  }
  ${ALERT_SETTINGS_FRAGMENT}
`;
