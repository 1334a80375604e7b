/** `stats(range)`: the staff dashboard's numbers (support and admin, from a web session). */
import { builder } from '../../graphql-core/builder.ts';
import { MoneyRef } from '../model/model.schema.ts';
import { UsageStatusEnum } from '../usage/usage.schema.ts';
import { statsRanges, type ReviewQueueSummary, type Stats, type StatsDay, type StatsFigures, type StatsModel, type StatsRange, type StatsRevenue, type StatsStatus } from './stats.service.ts';

const StatsRangeEnum = builder.enumType('StatsRange', {
  description: 'How far back the dashboard looks: calendar days in the configured time zone, today included.',
  values: Object.fromEntries(Object.entries(statsRanges).map(([name, days]) => [name, { value: name as StatsRange, description: `The last ${days} days.` }])) as Record<
    StatsRange,
    { value: StatsRange; description: string }
  >,
});

// Token totals pass 2^31 (GraphQL Int) on a busy service: counts are Floats that always hold whole numbers.
const StatsFiguresRef = builder.interfaceRef<StatsFigures>('StatsFigures').implement({
  description: 'Ledger figures: requests, tokens, spend, errors and refunds.',
  fields: (t) => ({
    requests: t.exposeFloat('requests', { description: 'Requests settled (every status); a whole number.' }),
    inputTokens: t.exposeFloat('inputTokens', { description: 'Input (prompt) tokens billed; a whole number.' }),
    outputTokens: t.exposeFloat('outputTokens', { description: 'Output (completion) tokens billed; a whole number.' }),
    spend: t.expose('spend', { type: MoneyRef, description: 'Charged to pools at effective prices, in the configured currency.' }),
    errors: t.exposeFloat('errors', { description: 'Requests that did not end ok: refunded, client left, model failed mid-reply, abandoned.' }),
    refunds: t.exposeFloat('refunds', { description: 'Requests refunded in full because they failed before any output.' }),
  }),
});

const StatsTotalsRef = builder.objectRef<StatsFigures>('StatsTotals').implement({
  description: 'Ledger figures summed over the whole range.',
  interfaces: [StatsFiguresRef],
});

const StatsRevenueRef = builder.objectRef<StatsRevenue>('StatsRevenue').implement({
  description: 'Money received and refunded in one currency (orders, by when they were paid or refunded).',
  fields: (t) => ({
    currency: t.exposeString('currency', { description: 'ISO 4217 code.' }),
    paidMinor: t.exposeFloat('paidMinor', { description: 'Paid, in minor units (cents, fen); a whole number.' }),
    paidAmount: t.exposeString('paidAmount', { description: 'The same as a decimal string, e.g. "65.00".' }),
    paidOrders: t.exposeInt('paidOrders', { description: 'Orders paid.' }),
    refundedMinor: t.exposeFloat('refundedMinor', { description: 'Refunded, in minor units; a whole number.' }),
    refundedAmount: t.exposeString('refundedAmount', { description: 'The same as a decimal string.' }),
    refundedOrders: t.exposeInt('refundedOrders', { description: 'Orders refunded.' }),
  }),
});

const StatsDayRef = builder.objectRef<StatsDay>('StatsDay').implement({
  description: 'One calendar day (configured time zone) of ledger figures.',
  interfaces: [StatsFiguresRef],
  fields: (t) => ({
    date: t.exposeString('date', { description: 'The local date, YYYY-MM-DD.' }),
    startsAt: t.expose('startsAt', { type: 'DateTime', description: 'Local midnight that starts the day.' }),
    revenue: t.expose('revenue', { type: [StatsRevenueRef], description: 'Orders paid and refunded that day, per currency (empty on a day without any).' }),
  }),
});

const StatsModelRef = builder.objectRef<StatsModel>('StatsModel').implement({
  description: 'Ledger figures of one product model over the range.',
  interfaces: [StatsFiguresRef],
  fields: (t) => ({
    model: t.exposeString('model', { description: 'Product model id the clients asked for.' }),
  }),
});

const StatsStatusRef = builder.objectRef<StatsStatus>('StatsStatus').implement({
  description: 'How many requests ended one way.',
  fields: (t) => ({
    status: t.expose('status', { type: UsageStatusEnum, description: 'How they ended.' }),
    requests: t.exposeFloat('requests', { description: 'Requests; a whole number.' }),
  }),
});

const ReviewQueueSummaryRef = builder.objectRef<ReviewQueueSummary>('ReviewQueueSummary').implement({
  description: 'Enterprise applications waiting for staff.',
  fields: (t) => ({
    pending: t.exposeInt('pending', { description: 'Applications waiting for review.' }),
    oldestSubmittedAt: t.expose('oldestSubmittedAt', { type: 'DateTime', nullable: true, description: 'When the oldest waiting one was submitted; null when none waits.' }),
    oldestApplicationId: t.exposeID('oldestApplicationId', { nullable: true, description: 'The oldest waiting application; null when none waits.' }),
  }),
});

const StatsRef = builder.objectRef<Stats>('Stats').implement({
  description: 'What the service did over a range of days, from the usage ledger and the orders.',
  fields: (t) => ({
    range: t.expose('range', { type: StatsRangeEnum, description: 'The range asked for.' }),
    days: t.exposeInt('days', { description: 'Days in the range.' }),
    from: t.expose('from', { type: 'DateTime', description: 'Local midnight of the first day.' }),
    to: t.expose('to', { type: 'DateTime', description: 'Local midnight after today (exclusive end).' }),
    timezone: t.exposeString('timezone', { description: 'Time zone the days follow (config timezone).' }),
    currency: t.exposeString('currency', { description: 'Currency of every spend amount.' }),
    totals: t.expose('totals', { type: StatsTotalsRef, description: 'Summed over the range.' }),
    byDay: t.expose('byDay', { type: [StatsDayRef], description: 'Every day of the range, oldest first; quiet days are zeros.' }),
    byModel: t.expose('byModel', { type: [StatsModelRef], description: 'Every model with requests in the range, most requests first.' }),
    byStatus: t.expose('byStatus', { type: [StatsStatusRef], description: 'Requests per ledger status (ok included), most first.' }),
    revenue: t.expose('revenue', { type: [StatsRevenueRef], description: 'Orders paid and refunded over the range, per currency.' }),
    reviewQueue: t.field({
      type: ReviewQueueSummaryRef,
      description: 'The enterprise review queue now (not limited to the range).',
      resolve: (_stats, _args, { principal, services }) => services.stats.reviewQueue(principal),
    }),
  }),
});

builder.queryField('stats', (t) =>
  t.field({
    type: StatsRef,
    authScopes: { signedIn: true },
    description: 'Staff: the dashboard — requests, tokens, spend, errors and refunds by day and by model, revenue, and the review queue (support and admin, from a web session).',
    args: { range: t.arg({ type: StatsRangeEnum, defaultValue: 'last_30_days', description: 'How many days back.' }) },
    resolve: (_root, args, { principal, services }) => services.stats.stats(principal, args.range ?? 'last_30_days'),
  }),
);

builder.queryField('reviewQueue', (t) =>
  t.field({
    type: ReviewQueueSummaryRef,
    authScopes: { signedIn: true },
    description:
      "Staff: the enterprise review queue now — how many wait and since when. The admin app's navigation and dashboard keep it live by asking again on each `enterpriseApplicationChanged` (support and admin, from a web session).",
    resolve: (_root, _args, { principal, services }) => services.stats.reviewQueue(principal),
  }),
);
