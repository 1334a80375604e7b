import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ALERT_SETTINGS_FRAGMENT, type AlertSettingsFragment } from './alert-settings.fragment.ts';

export const SET_ALERT_THRESHOLDS: TypedDocumentNode<{ setAlertThresholds: AlertSettingsFragment }, { organisationId?: string | null; meter: string; thresholds: number[] }> = gql`
  mutation SetAlertThresholds($organisationId: ID, $meter: String!, $thresholds: [Int!]!) {
    setAlertThresholds(organisationId: $organisationId, meter: $meter, thresholds: $thresholds) {
      ...AlertSettingsFragment
    }
  }
  ${ALERT_SETTINGS_FRAGMENT}
`;
