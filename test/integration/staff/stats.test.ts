/**
 * `stats(range)` adds the ledger up exactly: per local day of the configured time zone (America/New_York
 * here, across the end of daylight saving time), per model and per status; spend only in the configured
 * currency; revenue from paid and refunded orders. The seeded rows and every expected sum are written out
 * by hand below, not recomputed.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../server/authz/principal.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let app: TestApp;
let support: Person;
let payer: Person;

beforeAll(async () => {
  setup = await realMode();
  app = await startApp(setup.config, { config: { timezone: 'America/New_York' } });
  support = await seed(app).staff('support');
  payer = await seed(app).member({ tag: 'payer' });
});

afterAll(async () => {
  await app?.close();
  await setup?.cleanup();
});

let rows = 0;
async function ledgerRow(at: string, model: string, status: string, input: number, output: number, cost: number, currency = 'USD'): Promise<void> {
  rows += 1;
  await setup.database.query(
    `insert into usage_ledger (request_id, account_id, payer_id, credential_kind, credential_id, channel, model, routed_model, class, stream,
       input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, latency_ms, created_at)
     values ($1, $2, $2, 'api_key', 'k', 'api', $3, $3, $4, false, $5, $6, false, $7, $7, $8, $9, 10, $10)`,
    [`mbr_stats${rows}x${randomUUID()}`, payer.id, model, model === 'svc-2.1-fast' ? 'fast' : 'premium', input, output, cost, currency, status, at],
  );
}

async function order(currency: string, amountMinor: number, state: string, paidAt: string | null, refundedAt: string | null = null): Promise<void> {
  await setup.database.query(
    `insert into billing_order (id, created_at, updated_at, account_id, package_id, provider, amount_minor, list_minor, currency, state, expires_at, paid_at, refunded_at)
     values ($1, now(), now(), $2, 'pro', 'sandbox', $3, $3, $4, $5, now() + interval '2 hours', $6, $7)`,
    [`ord_${randomUUID().replaceAll('-', '').slice(0, 24)}`, payer.id, amountMinor, currency, state, paidAt, refundedAt],
  );
}

function principal(): Principal {
  return { accountId: support.id, email: support.email, role: 'support', payer: { kind: 'account', id: support.id, package: 'free' }, credential: { kind: 'web_session', id: randomUUID() } };
}

const zero = { requests: 0, inputTokens: 0, outputTokens: 0, spend: expect.objectContaining({ amountMicros: 0 }), errors: 0, refunds: 0 };
const usd = (amountMicros: number) => expect.objectContaining({ amountMicros, currency: 'USD' });

describe('stats on a seeded ledger (America/New_York)', () => {
  // "Now" is Tue 3 Nov 2026, 10:00 EST. Daylight saving time ended on Sun 1 Nov at 06:00 UTC, so 1 Nov
  // has 25 hours: it runs from 04:00 UTC to 05:00 UTC the next day.
  const now = Date.parse('2026-11-03T15:00:00Z');

  beforeAll(async () => {
    await ledgerRow('2026-11-03T05:00:30Z', 'svc-2.1-fast', 'ok', 100, 50, 1000); //            3 Nov 00:00:30 EST
    await ledgerRow('2026-11-03T14:00:00Z', 'svc-2.1-fast', 'refunded', 30, 0, 0); //            3 Nov 09:00 EST
    await ledgerRow('2026-11-03T04:59:30Z', 'svc-2.1', 'upstream_failed', 200, 20, 5000); //    2 Nov 23:59:30 EST (3 Nov in UTC)
    await ledgerRow('2026-11-02T04:30:00Z', 'svc-2.1', 'ok', 10, 5, 700); //                     1 Nov 23:30 EST (the 25th hour)
    await ledgerRow('2026-11-01T03:59:00Z', 'svc-2.1-fast', 'client_disconnected', 1, 2, 30); // 31 Oct 23:59 EDT
    await ledgerRow('2026-10-28T04:30:00Z', 'svc-img', 'ok', 7, 4096, 123456); //                28 Oct 00:30 EDT: the first of 7 days
    await ledgerRow('2026-10-28T03:30:00Z', 'svc-2.1-fast', 'ok', 1000, 1000, 999); //           27 Oct 23:30 EDT: before the 7 days
    await ledgerRow('2026-09-01T12:00:00Z', 'svc-2.1', 'abandoned', 3, 3, 333); //               1 Sep: only in the 90 days
    await ledgerRow('2026-11-03T12:00:00Z', 'svc-2.1-fast', 'ok', 5, 5, 77, 'CNY'); //           counted, but not USD spend
    await ledgerRow('2026-11-04T05:00:00Z', 'svc-2.1-fast', 'ok', 1, 1, 1_000_000); //           4 Nov 00:00 EST: the exclusive end

    await order('USD', 900, 'paid', '2026-11-03T03:00:00Z'); //                    2 Nov 22:00 EST
    await order('CNY', 6500, 'refunded', '2026-11-03T06:00:00Z', '2026-11-03T09:00:00Z'); // paid and refunded on 3 Nov
    await order('CNY', 6500, 'created', null); //                                  never paid
    await order('USD', 1900, 'paid', '2026-10-20T12:00:00Z'); //                   before the 7 days
  });

  it('last 7 days: exact sums per day, model and status; totals; bounds at local midnight', async () => {
    const stats = await app.app.services.stats.stats(principal(), 'last_7_days', now);
    expect(stats).toMatchObject({ range: 'last_7_days', days: 7, timezone: 'America/New_York', currency: 'USD' });
    expect(stats.from.toISOString()).toBe('2026-10-28T04:00:00.000Z');
    expect(stats.to.toISOString()).toBe('2026-11-04T05:00:00.000Z');
    expect(stats.totals).toEqual({ requests: 7, inputTokens: 353, outputTokens: 4178, spend: usd(130186), errors: 3, refunds: 1 });

    expect(stats.byDay.map((day) => [day.date, day.startsAt.toISOString()])).toEqual([
      ['2026-10-28', '2026-10-28T04:00:00.000Z'],
      ['2026-10-29', '2026-10-29T04:00:00.000Z'],
      ['2026-10-30', '2026-10-30T04:00:00.000Z'],
      ['2026-10-31', '2026-10-31T04:00:00.000Z'],
      ['2026-11-01', '2026-11-01T04:00:00.000Z'],
      ['2026-11-02', '2026-11-02T05:00:00.000Z'],
      ['2026-11-03', '2026-11-03T05:00:00.000Z'],
    ]);
    const day = (date: string) => {
      const { date: _d, startsAt: _s, revenue: _r, ...figures } = stats.byDay.find((d) => d.date === date)!;
      return figures;
    };
    expect(day('2026-10-28')).toEqual({ requests: 1, inputTokens: 7, outputTokens: 4096, spend: usd(123456), errors: 0, refunds: 0 });
    expect(day('2026-10-29')).toEqual(zero);
    expect(day('2026-10-30')).toEqual(zero);
    expect(day('2026-10-31')).toEqual({ requests: 1, inputTokens: 1, outputTokens: 2, spend: usd(30), errors: 1, refunds: 0 });
    expect(day('2026-11-01')).toEqual({ requests: 1, inputTokens: 10, outputTokens: 5, spend: usd(700), errors: 0, refunds: 0 });
    expect(day('2026-11-02')).toEqual({ requests: 1, inputTokens: 200, outputTokens: 20, spend: usd(5000), errors: 1, refunds: 0 });
    expect(day('2026-11-03')).toEqual({ requests: 3, inputTokens: 135, outputTokens: 55, spend: usd(1000), errors: 1, refunds: 1 });

    expect(stats.byModel).toEqual([
      { model: 'svc-2.1-fast', requests: 4, inputTokens: 136, outputTokens: 57, spend: usd(1030), errors: 2, refunds: 1 },
      { model: 'svc-2.1', requests: 2, inputTokens: 210, outputTokens: 25, spend: usd(5700), errors: 1, refunds: 0 },
      { model: 'svc-img', requests: 1, inputTokens: 7, outputTokens: 4096, spend: usd(123456), errors: 0, refunds: 0 },
    ]);
    expect(stats.byStatus[0]).toEqual({ status: 'ok', requests: 4 });
    expect(new Set(stats.byStatus.slice(1).map((s) => `${s.status}:${s.requests}`))).toEqual(new Set(['refunded:1', 'upstream_failed:1', 'client_disconnected:1']));
  });

  it('revenue: orders paid and refunded in the range, per currency and per local day', async () => {
    const stats = await app.app.services.stats.stats(principal(), 'last_7_days', now);
    expect(stats.revenue).toEqual([
      { currency: 'CNY', paidMinor: 6500, paidAmount: '65.00', paidOrders: 1, refundedMinor: 6500, refundedAmount: '65.00', refundedOrders: 1 },
      { currency: 'USD', paidMinor: 900, paidAmount: '9.00', paidOrders: 1, refundedMinor: 0, refundedAmount: '0.00', refundedOrders: 0 },
    ]);
    expect(stats.byDay.find((d) => d.date === '2026-11-02')!.revenue).toEqual([expect.objectContaining({ currency: 'USD', paidMinor: 900 })]);
    expect(stats.byDay.find((d) => d.date === '2026-11-03')!.revenue).toEqual([expect.objectContaining({ currency: 'CNY', paidMinor: 6500, refundedMinor: 6500 })]);
    expect(stats.byDay.filter((d) => d.revenue.length > 0).map((d) => d.date)).toEqual(['2026-11-02', '2026-11-03']);
  });

  it('last 30 and 90 days take in the older rows', async () => {
    const month = await app.app.services.stats.stats(principal(), 'last_30_days', now);
    expect(month.byDay).toHaveLength(30);
    expect(month.byDay[0]!.date).toBe('2026-10-05');
    expect(month.totals).toEqual({ requests: 8, inputTokens: 1353, outputTokens: 5178, spend: usd(131185), errors: 3, refunds: 1 });
    expect(month.byDay.find((d) => d.date === '2026-10-27')).toMatchObject({ requests: 1, spend: usd(999) });
    expect(month.revenue.find((r) => r.currency === 'USD')).toMatchObject({ paidMinor: 2800, paidOrders: 2 });

    const quarter = await app.app.services.stats.stats(principal(), 'last_90_days', now);
    expect(quarter.byDay).toHaveLength(90);
    expect(quarter.byDay[0]!.date).toBe('2026-08-06');
    expect(quarter.totals).toEqual({ requests: 9, inputTokens: 1356, outputTokens: 5181, spend: usd(131518), errors: 4, refunds: 1 });
    expect(quarter.byStatus.find((s) => s.status === 'abandoned')).toEqual({ status: 'abandoned', requests: 1 });
  });
});

describe('stats over GraphQL and REST, now', () => {
  const QUERY = `{ stats(range: last_7_days) {
    range days timezone currency from to
    totals { requests inputTokens outputTokens spend { amountMicros currency } errors refunds }
    byDay { date requests spend { amountMicros } }
    byModel { model requests }
    reviewQueue { pending oldestSubmittedAt oldestApplicationId }
  } }`;
  type Answer = {
    stats: {
      days: number;
      totals: { requests: number; inputTokens: number; outputTokens: number; spend: { amountMicros: number }; errors: number; refunds: number };
      byDay: { date: string; requests: number; spend: { amountMicros: number } }[];
      byModel: { model: string; requests: number }[];
      reviewQueue: unknown;
    };
  };

  it("a request settled now lands on today's local date; the review queue reads empty until enterprise wires in", async () => {
    const before = (await support.web.graphql<Answer>(QUERY)).data!.stats;
    await ledgerRow(new Date().toISOString(), 'svc-2.1-pro', 'upstream_failed', 11, 3, 4321);
    const after = (await support.web.graphql<Answer>(QUERY)).data!.stats;
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(new Date());
    expect(after.days).toBe(7);
    expect(after.byDay.at(-1)!.date).toBe(today);
    expect(after.byDay.at(-1)!.requests - before.byDay.at(-1)!.requests).toBe(1);
    expect(after.byDay.at(-1)!.spend.amountMicros - before.byDay.at(-1)!.spend.amountMicros).toBe(4321);
    expect(after.totals.inputTokens - before.totals.inputTokens).toBe(11);
    expect(after.totals.errors - before.totals.errors).toBe(1);
    expect(after.byModel.find((m) => m.model === 'svc-2.1-pro')).toEqual({ model: 'svc-2.1-pro', requests: 1 });
    expect(after.reviewQueue).toEqual({ pending: 0, oldestSubmittedAt: null, oldestApplicationId: null });

    const rest = await support.web.fetch('/api/membership/staff/stats?range=last_7_days');
    expect(rest.status).toBe(200);
    const body = (await rest.json()) as { stats: { totals: { requests: number }; reviewQueue: { pending: number } } };
    expect(body.stats.totals.requests).toBe(after.totals.requests);
    expect(body.stats.reviewQueue.pending).toBe(0);
  });

  it('an unknown range is a 400 naming the choices', async () => {
    const rest = await support.web.fetch('/api/membership/staff/stats?range=forever');
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({
      code: 'invalid_request',
      message: 'range must be one of last_7_days, last_30_days, last_90_days.',
      messageZh: 'range 必须是 last_7_days, last_30_days, last_90_days 之一。',
    });
    const graphql = await support.web.graphql('{ stats(range: forever) { days } }');
    expect(graphql.errors?.[0]?.message).toContain('Value "forever" does not exist in "StatsRange" enum');
  });
});
