/** Staff: the development outbox (`/admin/outbox`): `devOutbox` and, live, `devOutboxChanged`. */
import { builder } from '../../graphql-core/builder.ts';
import type { OutboxMail } from './dev-outbox.ts';
import type { DevOutboxView } from './mailer.ts';

const OutboxMailRef = builder.objectRef<OutboxMail>('OutboxMail').implement({
  description: 'A mail svc kept instead of sending it (no mail server is configured).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Stable id of this outbox entry.' }),
    to: t.exposeString('to', { description: 'The address it was meant for.' }),
    subject: t.exposeString('subject', { description: 'Subject line.' }),
    text: t.exposeString('text', { description: 'The plain-text body, sign-in codes included.' }),
    sentAt: t.expose('sentAt', { type: 'DateTime', description: 'When svc would have sent it.' }),
  }),
});

const DevOutboxRef = builder.objectRef<DevOutboxView>('DevOutbox').implement({
  description: 'Where mail goes on this server, and the development outbox when there is one.',
  fields: (t) => ({
    delivery: t.exposeString('delivery', { description: 'smtp, outbox (this outbox: no mail server, not production), log or unavailable; see AuthProviders.mailDelivery.' }),
    logged: t.exposeBoolean('logged', { description: 'Mail is also printed to the server log (mail.logOutbox).' }),
    mails: t.expose('mails', { type: [OutboxMailRef], description: 'The last mails kept (at most 100), newest first; empty unless delivery is outbox.' }),
  }),
});

builder.queryField('devOutbox', (t) =>
  t.field({
    type: DevOutboxRef,
    authScopes: { signedIn: true },
    description: 'Staff: the development outbox — the last mails svc kept because no mail server is configured (outside production only).',
    resolve: (_root, _args, { principal, services }) => services.mailer.readDevOutbox(principal),
  }),
);

builder.subscriptionField('devOutboxChanged', (t) =>
  t.field({
    type: DevOutboxRef,
    authScopes: { signedIn: true },
    description: 'Staff: the development outbox at once, then again whenever any server puts a mail in it.',
    subscribe: (_root, _args, { principal, services }) => services.mailer.watchDevOutbox(principal),
    resolve: (outbox) => outbox,
  }),
);
