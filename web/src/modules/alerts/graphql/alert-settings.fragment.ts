import { gql } from '@apollo/client';

export interface AlertSettingsFragment {
  accountId: string;
  defaultThresholds: number[];
  emailEnabled: boolean;
  webhook: { url: string; secretHint: string; updatedAt: string | null } | null;
  meters: {
    thresholds: number[];
    custom: boolean;
    meter: { id: string; kind: string; window: string; label: string; labelZh: string; used: { amount: string; amountMicros: number; currency: string }; limit: { amount: string; amountMicros: number; currency: string }; resetsAt: string };
  }[];
}

/** An account's alert thresholds per meter and its channels. */
export const ALERT_SETTINGS_FRAGMENT = gql`
  fragment AlertSettingsFragment on AlertSettings {
    accountId
    defaultThresholds
    emailEnabled
    webhook {
      url
      secretHint
      updatedAt
    }
    meters {
      thresholds
      custom
      meter {
        id
        kind
        window
        label
        labelZh
        used {
          amount
          amountMicros
          currency
        }
        limit {
          amount
          amountMicros
          currency
        }
        resetsAt
      }
    }
  }
`;
