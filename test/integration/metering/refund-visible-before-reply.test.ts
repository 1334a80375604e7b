/**
 * SECURITY "Quota and ledger": a refund is committed before the reply says `quotaRefunded: true`. A member
 * at the edge of a pool whose turn fails upstream must be able to retry at once — on another instance too
 * — and the usage read must no longer include the failed turn's reservation. Both ways of admitting:
 * the exact Redis script, and an admission lease (where the refund would otherwise sit in the lease, in
 * one instance's memory, where no other instance can see it).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { formatMicros } from '../../../server/config/money.ts';
import { settled, startApp, type TestApp } from '../../helpers/app.ts';
import { createMember, relaxedLimits, startHarness, type Harness, type Member } from '../gateway/harness.ts';

const maxTokens = 2000;
// Every request has the same size, so the same reservation; the upstream acts on the word.
const ask = (word: 'fail' | 'hold' | 'next') => ({ model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: word }], max_tokens: maxTokens });
const requestBytes = Buffer.byteLength(JSON.stringify(ask('next')));
// Fast class after the promotion: 42,000 / 84,000 micros per 1M tokens (prompt bound = request bytes).
const reservation = Math.ceil((requestBytes * 42_000 + maxTokens * 84_000) / 1_000_000);

const pools = (day: number) => ({ fast: { day: formatMicros(day), week: 100, month: 100 }, premium: { day: 1, week: 5, month: 20 } });
const plans = {
  ...defaultPlans,
  // At the edge: one reservation fits, two do not.
  free: { ...defaultPlans.free, requestsPerMinute: 100_000, pools: pools(reservation + Math.floor(reservation / 2)) },
  // Room for a lease of two (a lease takes at most a quarter of what is left) and six more reservations.
  pro: { ...defaultPlans.pro, requestsPerMinute: 100_000, pools: pools(8 * reservation + Math.floor(reservation / 2)) },
  // Other members' traffic never runs out.
  max: { ...defaultPlans.max, requestsPerMinute: 100_000 },
};

let h: Harness;
/** Leases from a payer's first request, kept until the test ends (a lease that retired would return the refund anyway). */
let leasing: TestApp;

beforeAll(async () => {
  h = await startHarness({ config: { plans } });
  h.upstream.setScript((body) => {
    const word = (body.messages as { content: string }[])[0]!.content;
    if (word === 'fail') return { latencyMs: 1000, status: 500 };
    if (word === 'hold') return { latencyMs: 4000 };
    return undefined;
  });
  leasing = await startApp(h.mode.config, {
    config: { ...relaxedLimits, plans, gateway: { admissionLeases: { hotRequests: 1, chunkRequests: 2, idleSeconds: 60, admitWindowSeconds: 60 } } },
    env: { SVC_UPSTREAM_URL: h.upstream.url },
  });
});
afterAll(async () => {
  await leasing?.close();
  await h?.close();
});

const clientOf = (member: Member, app: TestApp) => new OpenAI({ apiKey: member.key, baseURL: `${app.url}/v1`, maxRetries: 0 });

/** The fast class's used micros today, as the usage page on `app` reads it. */
async function usedToday(member: Member, app: TestApp): Promise<number> {
  const response = await fetch(`${app.url}/api/membership/usage`, { headers: { authorization: `Bearer ${member.key}` } });
  const body = (await response.json()) as { pools: { class: string; window: string; used: { amountMicros: number } }[] };
  return body.pools.find((p) => p.class === 'fast' && p.window === 'day')!.used.amountMicros;
}

/** A turn that fails upstream before any output, on `app`: 502 upstream_error, refunded. */
async function failedTurn(member: Member, app: TestApp): Promise<void> {
  const response = await fetch(`${app.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${member.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(ask('fail')),
  });
  const body = (await response.json()) as { code: string; debug: { quotaRefunded: boolean } };
  expect({ status: response.status, code: body.code, quotaRefunded: body.debug.quotaRefunded }).toEqual({ status: 502, code: 'upstream_error', quotaRefunded: true });
}

describe('a refund is visible before the reply says quotaRefunded', () => {
  it('at the edge of a pool, the failed turn is refunded on every instance by the time its error arrives', async () => {
    const member = await createMember(h.app);
    // Other members' traffic on the failing instance, as in production: its settlement rounds then gather a
    // few milliseconds of requests, and a refund written after the reply would lose the race below.
    const others = await Promise.all([0, 1].map(() => createMember(h.app, { planPackage: 'max_x20' })));
    let busy = true;
    const traffic = others.map(async (other) => {
      while (busy) {
        await clientOf(other, h.app).chat.completions.create(ask('next'));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    // Each round: fail on one instance, then at once read and retry on the other.
    for (let round = 0; round < 5; round++) {
      const before = await usedToday(member, leasing);
      await failedTurn(member, h.app);
      expect(await usedToday(member, leasing)).toBe(before);
      const next = await clientOf(member, leasing).chat.completions.create(ask('next'));
      expect(next.choices[0]!.message.content).toBeTruthy();
      // Its own reservation settled to its (small) cost before the next round's failing turn.
      await settled(leasing);
    }
    busy = false;
    await Promise.all(traffic);
  });

  it('under an admission lease, the refund goes back to the pools, not into the lease: another instance admits the retry', async () => {
    const member = await createMember(h.app, { planPackage: 'pro' });
    // The failing turn is this payer's first request on the leasing instance: a lease of two worst cases is taken for it.
    const failing = failedTurn(member, leasing);
    // Meanwhile six requests on the other instance fill the pool (2 leased + 6 = 8 of 8.5 reservations).
    await expect.poll(() => usedToday(member, h.app), { timeout: 5000, interval: 20 }).toBe(2 * reservation);
    const holding = Array.from({ length: 6 }, () => clientOf(member, h.app).chat.completions.create(ask('hold')));
    await expect.poll(() => usedToday(member, h.app), { timeout: 5000, interval: 20 }).toBe(8 * reservation);
    await failing;
    // The refunded reservation is back in the pools: the other instance has room for exactly one more.
    expect(await usedToday(member, h.app)).toBe(7 * reservation);
    const next = await clientOf(member, h.app).chat.completions.create(ask('next'));
    expect(next.choices[0]!.message.content).toBeTruthy();
    await Promise.all(holding);
  });
});
