/**
 * Issue 15 ("Redis restarted → reservations reconciled"): a Redis that comes back without its data (a
 * restart without persistence, a flush) starts every pool counter at zero, which would hand out the window
 * again until the 5-minute reconciliation. The instance notices at its next heartbeat (Redis no longer
 * knows it) and raises the pools to the ledger at once — and an admission that finds the pools unreconciled
 * (the `pools:epoch` marker is gone with the data) waits for that before it reserves, so a reservation
 * made on the empty Redis cannot hide the lost counters from the reconciliation. Real PostgreSQL and
 * Redis; the "restart" deletes
 * every key under this file's prefix (the shared Redis is never flushed).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '../fixtures/scripted-upstream.ts';
import { realMode, settled, startApp, type TestApp } from '../helpers/app.ts';
import { testRedisUrl } from '../helpers/env.ts';
import { seed } from '../helpers/seed.ts';

let mode: Awaited<ReturnType<typeof realMode>>;
let upstream: ScriptedUpstream;
let app: TestApp;

beforeAll(async () => {
  mode = await realMode();
  upstream = await startScriptedUpstream();
  app = await startApp(mode.config, { env: { SVC_UPSTREAM_URL: upstream.url } });
});
afterAll(async () => {
  await app?.close();
  await upstream?.close();
  await mode?.cleanup();
});

/** Deletes every key under `prefix`; returns how many there were. */
async function forgetEverything(prefix: string): Promise<number> {
  const redis = new Redis(testRedisUrl);
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}

describe('Redis comes back empty', () => {
  it('the pools are raised to the ledger at the next heartbeat, not at the next 5-minute round', async () => {
    const member = await seed(app).member();
    const { client } = await member.withKey();
    await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 });
    await settled(app);
    const used = async () => {
      const result = await member.web.graphql<{ usage: { pools: { class: string; window: string; used: { amountMicros: number } }[] } }>(
        '{ usage { pools { class window used { amountMicros } } } }',
      );
      return result.data!.usage.pools.find((pool) => pool.class === 'fast' && pool.window === 'day')!.used.amountMicros;
    };
    const before = await used();
    expect(before).toBeGreaterThan(0);

    // The pools are gone from Redis. (Read through the API, they may already be back: the heartbeat can run
    // between the deletion and the read on a loaded machine.)
    expect(await forgetEverything((mode.config.redis as { keyPrefix: string }).keyPrefix)).toBeGreaterThan(0);
    // The heartbeat runs every 2 s; the 5-minute reconciliation would be far past this wait.
    await expect.poll(used, { timeout: 15_000, interval: 250 }).toBe(before);
  });

  it('a request on the empty Redis is admitted only after the pools were raised to the ledger', async () => {
    const member = await seed(app).member();
    const { client } = await member.withKey();
    await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 });
    await settled(app);
    await forgetEverything((mode.config.redis as { keyPrefix: string }).keyPrefix);
    // Right away, with a reservation (1,024 tokens' worth) far above what the ledger holds, and slow
    // enough that a heartbeat comes while it runs: its reservation must not stand in for the lost counter.
    await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: '#script {"latencyMs":2500}\nhello' }] });
    await settled(app);
    const { rows } = await mode.database.query('select coalesce(sum(cost_micros), 0)::bigint as cost from usage_ledger where account_id = $1', [member.id]);
    const result = await member.web.graphql<{ usage: { pools: { class: string; window: string; used: { amountMicros: number } }[] } }>('{ usage { pools { class window used { amountMicros } } } }');
    expect(result.data!.usage.pools.find((pool) => pool.class === 'fast' && pool.window === 'day')!.used.amountMicros).toBe(Number(rows[0].cost));
  });
});
