import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import { OUTBOX_MAIL_FRAGMENT, type OutboxMailFragment } from './outbox-mail.fragment.ts';

export type MailDelivery = 'smtp' | 'outbox' | 'log' | 'unavailable';

export interface DevOutboxQuery {
  devOutbox: { delivery: MailDelivery; logged: boolean; mails: OutboxMailFragment[] };
}

/** Staff: where mail goes, and the development outbox's last mails (newest first). */
export const DEV_OUTBOX_QUERY: TypedDocumentNode<DevOutboxQuery, Record<string, never>> = gql`
  query DevOutbox {
    devOutbox {
      delivery
      logged
      mails {
        ...OutboxMailFragment
      }
    }
  }
  ${OUTBOX_MAIL_FRAGMENT}
`;
