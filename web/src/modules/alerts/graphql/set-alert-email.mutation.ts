import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ALERT_SETTINGS_FRAGMENT, type AlertSettingsFragment } from './alert-settings.fragment.ts';

export const SET_ALERT_EMAIL: TypedDocumentNode<{ setAlertEmail: AlertSettingsFragment }, { organisationId?: string | null; enabled: boolean }> = gql`
  mutation SetAlertEmail($organisationId: ID, $enabled: Boolean!) {
    setAlertEmail(organisationId: $organisationId, enabled: $enabled) {
      ...AlertSettingsFragment
    }
  }
  ${ALERT_SETTINGS_FRAGMENT}
`;
