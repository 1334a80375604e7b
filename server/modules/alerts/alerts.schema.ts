import { money } from '../../config/money.ts';
import { builder } from '../../graphql-core/builder.ts';
import { MoneyRef } from '../model/model.schema.ts';
import { PoolWindowEnum } from '../plan/plan.schema.ts';
import type { Meter } from './alerts.meter.ts';
import type { AlertSettings, MeterSetting, NoticeList } from './alerts.service.ts';
import type { DeliveryAttempt, DeliveryRow, NoticeRow } from './alerts.store.ts';

const MeterKindEnum = builder.enumType('MeterKind', {
  description: 'What an alert watches.',
  values: {
    pool: { value: 'pool', description: "One of the account's usage pools (class × window)." },
    key: { value: 'key', description: "An API key's spend cap." },
  } as const,
});

const MeterRef = builder.objectRef<Meter & { currency: string }>('Meter').implement({
  description: 'Something with a used amount, a limit and a window it resets on: a usage pool (and, later, a key cap).',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'Stable id thresholds are set under, e.g. pool:fast:day.' }),
    kind: t.expose('kind', { type: MeterKindEnum, description: 'Pool or key cap.' }),
    window: t.expose('window', { type: PoolWindowEnum, description: 'The window it resets on.' }),
    windowKey: t.exposeString('windowKey', { description: 'The current window, e.g. d2026-12-07: one alert per threshold per window.' }),
    label: t.string({ description: 'Its name in English.', resolve: (meter) => meter.label.en }),
    labelZh: t.string({ description: 'Its name in Chinese.', resolve: (meter) => meter.label.zh }),
    used: t.field({ type: MoneyRef, description: 'Used in the current window (running requests included).', resolve: (meter) => money(meter.usedMicros, meter.currency) }),
    limit: t.field({ type: MoneyRef, description: 'The limit per window.', resolve: (meter) => money(meter.limitMicros, meter.currency) }),
    resetsAt: t.expose('resetsAt', { type: 'DateTime', description: 'When the current window ends.' }),
  }),
});

const MeterSettingRef = builder.objectRef<MeterSetting & { currency: string }>('AlertMeterSetting').implement({
  description: 'A meter and the thresholds it alerts at.',
  fields: (t) => ({
    meter: t.field({ type: MeterRef, description: 'The meter.', resolve: (setting) => ({ ...setting.meter, currency: setting.currency }) }),
    thresholds: t.exposeIntList('thresholds', { description: 'Percentages of the limit that send an alert when crossed (empty: off).' }),
    custom: t.exposeBoolean('custom', { description: 'False while the meter uses the default thresholds.' }),
  }),
});

const WebhookRef = builder.objectRef<NonNullable<AlertSettings['webhook']>>('AlertWebhook').implement({
  description: 'Where signed alert events are POSTed.',
  fields: (t) => ({
    url: t.exposeString('url', { description: 'The https URL.' }),
    secretHint: t.exposeString('secretHint', { description: 'whsec_… and the last four characters of the signing secret (the secret is shown once).' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true, description: 'When the webhook was last changed.' }),
  }),
});

const AlertSettingsRef = builder.objectRef<AlertSettings & { currency: string }>('AlertSettings').implement({
  description: "An account's spend alerts: thresholds per meter and the channels.",
  fields: (t) => ({
    accountId: t.exposeID('accountId', { description: 'Whose alerts: your account or an organisation.' }),
    defaultThresholds: t.exposeIntList('defaultThresholds', { description: 'Thresholds of a meter nobody changed.' }),
    meters: t.field({ type: [MeterSettingRef], description: 'Every meter with its thresholds.', resolve: (s) => s.meters.map((m) => ({ ...m, currency: s.currency })) }),
    emailEnabled: t.exposeBoolean('emailEnabled', { description: 'Alerts are emailed (to you, or to an organisation’s owner and admins).' }),
    webhook: t.field({ type: WebhookRef, nullable: true, description: 'The webhook, if set.', resolve: (s) => s.webhook }),
  }),
});

const AttemptRef = builder.objectRef<DeliveryAttempt>('AlertDeliveryAttempt').implement({
  description: 'One try of a delivery and its answer.',
  fields: (t) => ({
    at: t.exposeString('at', { description: 'When (ISO 8601).' }),
    attempt: t.exposeInt('attempt', { description: '1 for the first try.' }),
    status: t.exposeInt('status', { nullable: true, description: 'HTTP status of the answer (webhooks), or null.' }),
    latencyMs: t.exposeInt('latencyMs', { description: 'How long it took.' }),
    response: t.exposeString('response', { nullable: true, description: 'The start of the answer body (500 characters).' }),
    error: t.exposeString('error', { nullable: true, description: 'Why it failed, or null.' }),
  }),
});

const DeliveryStateEnum = builder.enumType('AlertDeliveryState', {
  description: 'Where a delivery is.',
  values: {
    pending: { value: 'pending', description: 'Queued, or waiting to be retried.' },
    delivered: { value: 'delivered', description: 'Sent (a webhook answered 2xx).' },
    failed: { value: 'failed', description: 'Given up (24 h of retries, or the URL is refused).' },
  } as const,
});

const DeliveryChannelEnum = builder.enumType('AlertChannel', {
  description: 'How an alert is delivered.',
  values: { email: { value: 'email', description: 'Email.' }, webhook: { value: 'webhook', description: 'Signed webhook.' } } as const,
});

const DeliveryRef = builder.objectRef<DeliveryRow>('AlertDelivery').implement({
  description: 'One email or webhook of an alert (or a test), with its answers.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Also the Svc-Webhook-Id header.' }),
    channel: t.expose('channel', { type: DeliveryChannelEnum, description: 'Email or webhook.' }),
    target: t.exposeString('target', { description: 'The address or URL.' }),
    test: t.exposeBoolean('test', { description: 'Sent by "send test".' }),
    state: t.expose('state', { type: DeliveryStateEnum, description: 'Pending, delivered or failed.' }),
    attempts: t.exposeInt('attempts', { description: 'Tries so far.' }),
    nextAttemptAt: t.field({ type: 'DateTime', nullable: true, description: 'When the next try is due (pending only).', resolve: (d) => (d.state === 'pending' ? d.nextAttemptAt : null) }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was queued.' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true, description: 'When it was delivered or given up.' }),
    lastStatus: t.exposeInt('lastStatus', { nullable: true, description: 'HTTP status of the last answer.' }),
    lastLatencyMs: t.exposeInt('lastLatencyMs', { nullable: true, description: 'Latency of the last try.' }),
    lastResponse: t.exposeString('lastResponse', { nullable: true, description: 'Start of the last answer body.' }),
    lastError: t.exposeString('lastError', { nullable: true, description: 'Why the last try failed.' }),
    payload: t.field({ type: 'JSON', description: 'The event body (webhooks) or the mail (email).', resolve: (d) => d.payload }),
    history: t.field({ type: [AttemptRef], description: 'Every try, oldest first.', resolve: (d) => d.history }),
  }),
});

const NoticeRef = builder.objectRef<NoticeRow>('AlertNotice').implement({
  description: 'An in-app notice that a threshold was crossed.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Notice id.' }),
    accountId: t.exposeID('accountId', { description: 'Whose meter: yours, or an organisation you administer.' }),
    meter: t.exposeString('meter', { description: 'Meter id, e.g. pool:fast:day.' }),
    threshold: t.exposeInt('threshold', { description: 'The percentage crossed.' }),
    windowKey: t.exposeString('windowKey', { description: 'The window it was crossed in.' }),
    used: t.field({ type: MoneyRef, description: 'Used when it was crossed.', resolve: (n) => money(n.usedMicros, n.currency) }),
    limit: t.field({ type: MoneyRef, description: 'The limit.', resolve: (n) => money(n.limitMicros, n.currency) }),
    resetsAt: t.expose('resetsAt', { type: 'DateTime', description: 'When the window resets.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When.' }),
    readAt: t.expose('readAt', { type: 'DateTime', nullable: true, description: 'When you marked it read.' }),
  }),
});

const NoticeListRef = builder.objectRef<NoticeList>('AlertNotices').implement({
  description: 'Your alert notices.',
  fields: (t) => ({
    unread: t.exposeInt('unread', { description: 'How many are unread.' }),
    notices: t.field({ type: [NoticeRef], description: 'The latest 20, newest first.', resolve: (list) => list.notices }),
  }),
});

const SetWebhookResultRef = builder.objectRef<{ settings: AlertSettings & { currency: string }; secret: string | null }>('SetAlertWebhookResult').implement({
  description: 'The settings after the change, and the signing secret when this call made one.',
  fields: (t) => ({
    settings: t.field({ type: AlertSettingsRef, description: 'The settings now.', resolve: (r) => r.settings }),
    secret: t.exposeString('secret', { nullable: true, description: 'The new signing secret (whsec_…): shown this once.' }),
  }),
});

const organisationArgDescription = 'An organisation you are an owner or admin of; omitted: your own account.';
const organisationOf = (id: string | number | null | undefined): string | null => (id === null || id === undefined ? null : String(id));

builder.queryField('alertSettings', (t) =>
  t.field({
    type: AlertSettingsRef,
    authScopes: { signedIn: true },
    description: 'Spend alert thresholds per meter and the channels (your account, or an organisation’s).',
    args: { organisationId: t.arg.id({ description: organisationArgDescription }) },
    resolve: async (_root, args, { principal, services }) => ({
      ...(await services.alerts.settings(principal, organisationOf(args.organisationId))),
      currency: services.config.currency,
    }),
  }),
);

builder.queryField('alertDeliveries', (t) =>
  t.field({
    type: [DeliveryRef],
    authScopes: { signedIn: true },
    description: 'The latest alert emails and webhooks (tests included) with their answers, newest first.',
    args: { organisationId: t.arg.id({ description: organisationArgDescription }), first: t.arg.int({ description: '1–200, default 50.' }) },
    resolve: (_root, args, { principal, services }) => services.alerts.deliveries(principal, { organisationId: organisationOf(args.organisationId), first: args.first }),
  }),
);

builder.queryField('alertNotices', (t) =>
  t.field({
    type: NoticeListRef,
    authScopes: { signedIn: true },
    description: 'Your in-app alert notices (your account and the organisations you administer).',
    resolve: (_root, _args, { principal, services }) => services.alerts.notices(principal),
  }),
);

builder.mutationField('setAlertThresholds', (t) =>
  t.field({
    type: AlertSettingsRef,
    authScopes: { signedIn: true },
    description: 'Sets the thresholds of one meter: whole percentages 1–100, at most 5; an empty list turns its alerts off (needs a web session).',
    args: {
      organisationId: t.arg.id({ description: organisationArgDescription }),
      meter: t.arg.string({ required: true, description: 'Meter id, e.g. pool:fast:day.' }),
      thresholds: t.arg.intList({ required: true, description: 'Percentages, e.g. [80, 100].' }),
    },
    resolve: async (_root, args, { principal, services }) => ({
      ...(await services.alerts.setThresholds(principal, { organisationId: organisationOf(args.organisationId), meter: args.meter, thresholds: args.thresholds })),
      currency: services.config.currency,
    }),
  }),
);

builder.mutationField('setAlertEmail', (t) =>
  t.field({
    type: AlertSettingsRef,
    authScopes: { signedIn: true },
    description: 'Turns alert emails on or off (needs a web session).',
    args: { organisationId: t.arg.id({ description: organisationArgDescription }), enabled: t.arg.boolean({ required: true, description: 'Send emails.' }) },
    resolve: async (_root, args, { principal, services }) => ({
      ...(await services.alerts.setEmail(principal, { organisationId: organisationOf(args.organisationId), enabled: args.enabled })),
      currency: services.config.currency,
    }),
  }),
);

builder.mutationField('setAlertWebhook', (t) =>
  t.field({
    type: SetWebhookResultRef,
    authScopes: { signedIn: true },
    description: 'Sets the webhook URL (null removes it). A new webhook, or rotateSecret, makes a signing secret, returned this once (needs a web session).',
    args: {
      organisationId: t.arg.id({ description: organisationArgDescription }),
      url: t.arg.string({ description: 'https URL (plain http only to localhost outside production); null removes the webhook.' }),
      rotateSecret: t.arg.boolean({ description: 'Replace the signing secret.' }),
    },
    resolve: async (_root, args, { principal, services }) => {
      const result = await services.alerts.setWebhook(principal, { organisationId: organisationOf(args.organisationId), url: args.url ?? null, rotateSecret: args.rotateSecret ?? false });
      return { settings: { ...result.settings, currency: services.config.currency }, secret: result.secret };
    },
  }),
);

builder.mutationField('sendTestAlert', (t) =>
  t.field({
    type: DeliveryRef,
    authScopes: { signedIn: true },
    description: 'POSTs a signed test event (type alert.test) to the webhook now and returns the delivery with its answer (needs a web session).',
    args: { organisationId: t.arg.id({ description: organisationArgDescription }) },
    resolve: (_root, args, { principal, services }) => services.alerts.sendTest(principal, organisationOf(args.organisationId)),
  }),
);

builder.mutationField('markAlertNoticesRead', (t) =>
  t.field({
    type: NoticeListRef,
    authScopes: { signedIn: true },
    description: 'Marks all your alert notices read.',
    resolve: (_root, _args, { principal, services }) => services.alerts.markNoticesRead(principal),
  }),
);

builder.subscriptionField('alertNoticesUpdated', (t) =>
  t.field({
    type: NoticeListRef,
    authScopes: { signedIn: true },
    description: 'Your alert notices now, and again whenever one arrives (or they are marked read) on any instance.',
    subscribe: (_root, _args, { services, principal }) => services.alerts.events.watch(principal!.accountId),
    resolve: (generation, _args, { services, principal }) => services.alerts.notices(principal, generation),
  }),
);
