/**
 * Quota edge: fund exactly k requests, fire 200 at once through a barrier across two app instances that
 * share PostgreSQL and Redis → exactly k are admitted, the pool is never overdrawn, the ledger has k rows.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { formatMicros } from '../../../server/config/money.ts';
import { settled, startApp, type TestApp } from '../../helpers/app.ts';
import { createMember, ledgerRows, relaxedLimits, startHarness, type Harness } from './harness.ts';

const k = 7;
const maxTokens = 2000;
const messages = [{ role: 'user' as const, content: 'Count to three, slowly. #quota' }];
// Fast class: 0.14 / 0.28 per 1M, 70 % off → 42,000 / 84,000 micros per 1M tokens. The reservation is
// (request bytes as the prompt bound) × input + max_tokens × output, rounded up.
const params = { model: 'svc-2.1-fast', messages, max_tokens: maxTokens };
const requestBytes = Buffer.byteLength(JSON.stringify(params));
const reservation = Math.ceil((requestBytes * 42_000 + maxTokens * 84_000) / 1_000_000);
// Room for k reservations and half of another.
const dayLimit = k * reservation + Math.floor(reservation / 2);

const plans = {
  ...defaultPlans,
  free: {
    name: 'Free',
    requestsPerMinute: 100_000,
    pools: { fast: { day: formatMicros(dayLimit), week: 100, month: 100 }, premium: { day: 1, week: 5, month: 20 } },
    packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }],
  },
};

let h: Harness;
let second: TestApp;

beforeAll(async () => {
  // A slow upstream: every reservation is made before the first one settles (with room to spare when the
  // machine is busy running other test files: a settled request frees most of its reservation).
  h = await startHarness({ config: { plans }, upstream: { defaults: { latencyMs: 4000 } } });
  second = await startApp(h.mode.config, { config: { ...relaxedLimits, plans }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
});
afterAll(async () => {
  await second?.close();
  await h?.close();
});

describe('pools under concurrency', () => {
  it(`admits exactly ${k} of 200 simultaneous requests across two instances`, async () => {
    const member = await h.member();
    const clients = [h.app.url, second.url].map((url) => new OpenAI({ apiKey: member.key, baseURL: `${url}/v1`, maxRetries: 0 }));
    let release!: () => void;
    const barrier = new Promise<void>((resolve) => (release = resolve));
    const attempts = Array.from({ length: 200 }, async (_, i) => {
      await barrier;
      return clients[i % 2]!.chat.completions.create(params).then(
        () => 'ok' as const,
        (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
      );
    });
    release();
    const results = await Promise.all(attempts);
    const admitted = results.filter((r) => r === 'ok');
    const rejected = results.filter((r) => r !== 'ok');
    expect(admitted).toHaveLength(k);
    for (const error of rejected) {
      expect(error.status).toBe(402);
      expect(error.code).toBe('quota_exceeded');
    }
    expect(h.upstream.stats.requests).toBe(k);

    const rows = await ledgerRows(h.database, member.accountId, k);
    expect(rows).toHaveLength(k);
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    expect(billed).toBeLessThanOrEqual(dayLimit);
    for (const row of rows) expect(Number(row.reserved_micros)).toBe(reservation);

    // Settled: the pool holds exactly what the ledger billed (reservations released).
    await settled(h.app, second);
    const usage = await fetch(`${second.url}/api/membership/usage`, { headers: { authorization: `Bearer ${member.key}` } });
    const report = (await usage.json()) as { pools: { class: string; window: string; used: { amountMicros: number }; limit: { amountMicros: number }; resetsAt: string }[] };
    expect(report.pools).toHaveLength(6);
    const fastDay = report.pools.find((p) => p.class === 'fast' && p.window === 'day')!;
    expect(fastDay.used.amountMicros).toBe(billed);
    expect(fastDay.limit.amountMicros).toBe(dayLimit);
    expect(new Date(fastDay.resetsAt).getTime()).toBeGreaterThan(Date.now());
  });

  it('402 names the window and its reset time, and the SDK sees a generic APIError', async () => {
    const member = await createMember(h.app);
    const before = h.upstream.stats.requests;
    // k requests in flight hold the whole day pool; one more does not fit.
    const inFlight = Array.from({ length: k }, () => member.client.chat.completions.create(params));
    // All k admitted (at the upstream, which holds each for 4 s) before the one more: a fixed pause let a
    // busy CI machine send it while one of the k was still being admitted, and the k-th got the 402.
    await vi.waitFor(() => expect(h.upstream.stats.requests - before).toBe(k), { timeout: 3000, interval: 20 });
    const error = await member.client.chat.completions.create(params).catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).not.toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    const raw = await fetch(`${h.app.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(params),
    });
    expect(raw.status).toBe(402);
    expect(raw.headers.get('x-should-retry')).toBe('false');
    const body = (await raw.json()) as { code: string; stage: string; actions: string[]; quota: { class: string; window: string; resetsAt: string } };
    expect(body).toMatchObject({ code: 'quota_exceeded', stage: 'quota', actions: ['upgrade', 'top_up', 'wait'] });
    expect(body.quota).toMatchObject({ class: 'fast', window: 'day' });
    const tomorrow = new Date();
    tomorrow.setUTCHours(24, 0, 0, 0);
    expect(body.quota.resetsAt).toBe(tomorrow.toISOString());
    await Promise.all(inFlight);
    expect(h.upstream.stats.requests - before).toBe(k);
  });
});
