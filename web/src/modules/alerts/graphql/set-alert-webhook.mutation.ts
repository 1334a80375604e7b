import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { ALERT_SETTINGS_FRAGMENT, type AlertSettingsFragment } from './alert-settings.fragment.ts';

export interface SetAlertWebhookMutation {
  setAlertWebhook: { secret: string | null; settings: AlertSettingsFragment };
}

/** Sets or removes the webhook; `secret` is the new signing secret, shown once. */
export const SET_ALERT_WEBHOOK: TypedDocumentNode<SetAlertWebhookMutation, { organisationId?: string | null; url: string | null; rotateSecret?: boolean }> = gql`
  mutation SetAlertWebhook($organisationId: ID, $url: String, $rotateSecret: Boolean) {
    setAlertWebhook(organisationId: $organisationId, url: $url, rotateSecret: $rotateSecret) {
      secret
      settings {
        ...AlertSettingsFragment
      }
    }
  }
  ${ALERT_SETTINGS_FRAGMENT}
`;
