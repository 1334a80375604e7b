import { gql } from '@apollo/client';

export interface AlertNoticesFragment {
  unread: number;
  notices: { id: string; meter: string; threshold: number; createdAt: string; readAt: string | null; used: { amount: string; currency: string }; limit: { amount: string; currency: string } }[];
}

export const ALERT_NOTICES_FRAGMENT = gql`
  fragment AlertNoticesFragment on AlertNotices {
    unread
    notices {
      id
      meter
      threshold
      createdAt
      readAt
      used {
        amount
        currency
      }
      limit {
        amount
        currency
      }
    }
  }
`;
