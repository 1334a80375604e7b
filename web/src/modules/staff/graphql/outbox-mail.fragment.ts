import { gql } from '@apollo/client';

export interface OutboxMailFragment {
  id: string;
  to: string;
  subject: string;
  text: string;
  sentAt: string;
}

export const OUTBOX_MAIL_FRAGMENT = gql`
  fragment OutboxMailFragment on OutboxMail {
    id
    to
    subject
    text
    sentAt
  }
`;
