/**
 * A key's spend caps survive Redis losing its data (SECURITY "reconcile Redis counters against the
 * ledger"): after a FLUSHALL the per-key day and month counters are rebuilt from the ledger before anything
 * is admitted again, so a key that had spent most of its cap cannot spend it again. Two instances hammer the
 * key at once right after the flush. The Redis is a private `redis-server` this file owns: FLUSHALL there
 * touches no other test's data.
 */
import OpenAI from 'openai';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { formatMicros } from '../../../server/config/money.ts';
import { keyCapKey } from '../../../server/metering/pool.redis-store.ts';
import { PrivateRedis } from '../../drills/bed.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { realMode, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';

const maxTokens = 2000;
// Every reply reports the whole max_tokens as output: each turn costs nearly its reservation.
const script = JSON.stringify({ usageOverride: { prompt_tokens: 10, completion_tokens: maxTokens } });
const params = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: `#script ${script}\nspend` }], max_tokens: maxTokens };
// Fast class at 70 % off: 42,000 / 84,000 micros per 1M tokens; the reservation counts the body's bytes as input.
const reservation = Math.ceil((Buffer.byteLength(JSON.stringify(params)) * 42_000 + maxTokens * 84_000) / 1_000_000);
const cost = Math.ceil((10 * 42_000 + maxTokens * 84_000) / 1_000_000);
// Room for five reservations and half of another; three are spent before the flush.
const dayCap = 5 * reservation + Math.floor(reservation / 2);
const plans = {
  ...defaultPlans,
  free: {
    name: 'Free',
    requestsPerMinute: 100_000,
    pools: { fast: { day: 100, week: 100, month: 100 }, premium: { day: 100, week: 100, month: 100 } },
    packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }],
  },
};

let redis: PrivateRedis;
let setup: Awaited<ReturnType<typeof realMode>>;
let upstream: ScriptedUpstream;
let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  redis = new PrivateRedis();
  await redis.start();
  setup = await realMode();
  // A slow upstream: after the flush every reservation is made before the first one settles.
  upstream = await startScriptedUpstream({ defaults: { latencyMs: 1500 } });
  const options = { config: { plans, rateLimits: { ipPerMinute: 100_000, concurrentStreamsPerAccount: 1000 } }, env: { SVC_UPSTREAM_URL: upstream.url } };
  const config = { ...setup.config, redis: { url: redis.url, keyPrefix: 'svc:' } };
  a = await startApp(config, options);
  b = await startApp(config, options);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await Promise.allSettled([upstream?.close(), redis?.stop()]);
  await setup?.cleanup();
});

describe('key spend caps after Redis lost its data', () => {
  it('are rebuilt from the ledger: after FLUSHALL two instances admit only what is left of the cap', async () => {
    expect(cost).toBeLessThanOrEqual(reservation);
    const member = await seed(a).member();
    const created = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'capped', budgetDay: formatMicros(dayCap) } });
    expect(created.status).toBe(201);
    const { token, id: keyId } = (await created.json()) as { token: string; id: string };
    const clients = [a.url, b.url].map((url) => new OpenAI({ apiKey: token, baseURL: `${url}/v1`, maxRetries: 0 }));

    for (let i = 0; i < 3; i++) await clients[i % 2]!.chat.completions.create(params);
    await settled(a, b);
    const billed = async () => {
      const { rows } = await setup.database.query(`select coalesce(sum(cost_micros), 0)::bigint as billed, max(reserved_micros)::bigint as reserved from usage_ledger where credential_id = $1`, [keyId]);
      const row = rows[0] as { billed: string; reserved: string };
      return { billed: Number(row.billed), reserved: Number(row.reserved) };
    };
    const before = await billed();
    expect(before).toEqual({ billed: 3 * cost, reserved: reservation });

    const inspect = new Redis(redis.url, { keyPrefix: 'svc:' });
    try {
      const dayKey = a.app.services.windows.current().day.key;
      const counter = async () => Number(await inspect.get(keyCapKey(keyId, dayKey)));
      expect(await counter()).toBe(before.billed);
      // Redis restarts empty (or is flushed): every counter, reservation and the reconciliation mark are gone.
      await inspect.flushall();
      expect(await inspect.dbsize()).toBe(0);

      const left = dayCap - before.billed;
      const fits = Math.floor(left / reservation);
      // Without the rebuild the key would get all five of its cap's reservations again.
      expect(fits).toBe(2);
      let release!: () => void;
      const barrier = new Promise<void>((resolve) => (release = resolve));
      const attempts = Array.from({ length: 40 }, async (_, i) => {
        await barrier;
        return clients[i % 2]!.chat.completions.create(params).then(
          () => 'ok',
          (error: { code?: string; status?: number }) => `${error.status} ${error.code}`,
        );
      });
      release();
      const results = await Promise.all(attempts);
      expect(results.filter((r) => r === 'ok')).toHaveLength(fits);
      expect(results.filter((r) => r !== 'ok').every((r) => r === '402 key_budget_exceeded')).toBe(true);

      await settled(a, b);
      const after = await billed();
      expect(after.billed).toBe(before.billed + fits * cost);
      expect(after.billed).toBeLessThanOrEqual(dayCap);
      // The rebuilt counter went on counting from the ledger's figure.
      expect(await counter()).toBe(after.billed);
    } finally {
      inspect.disconnect();
    }
  }, 60_000);
});
