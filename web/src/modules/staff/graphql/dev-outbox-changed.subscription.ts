import { gql } from '@apollo/client';
import type { TypedDocumentNode } from '@apollo/client';
import type { DevOutboxQuery } from './dev-outbox.query.ts';
import { OUTBOX_MAIL_FRAGMENT } from './outbox-mail.fragment.ts';

/** The development outbox at once, then again whenever any server puts a mail in it. */
export const DEV_OUTBOX_CHANGED_SUBSCRIPTION: TypedDocumentNode<{ devOutboxChanged: DevOutboxQuery['devOutbox'] }, Record<string, never>> = gql`
  subscription DevOutboxChanged {
    devOutboxChanged {
      delivery
      logged
      mails {
        ...OutboxMailFragment
      }
    }
  }
  ${OUTBOX_MAIL_FRAGMENT}
`;
