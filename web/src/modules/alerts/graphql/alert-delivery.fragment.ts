import { gql } from '@apollo/client';

export interface AlertDeliveryFragment {
  id: string;
  channel: 'email' | 'webhook';
  target: string;
  test: boolean;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
  lastStatus: number | null;
  lastLatencyMs: number | null;
  lastResponse: string | null;
  lastError: string | null;
}

export const ALERT_DELIVERY_FRAGMENT = gql`
  fragment AlertDeliveryFragment on AlertDelivery {
    id
    channel
    target
    test
    state
    attempts
    nextAttemptAt
    createdAt
    lastStatus
    lastLatencyMs
    lastResponse
    lastError
  }
`;
