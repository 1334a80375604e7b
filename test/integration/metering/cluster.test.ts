/**
 * Cluster mode: `REDIS_URL` naming a 3-master Redis Cluster this file starts on loopback. Every script's keys
 * must share one slot (a CROSSSLOT error would be a 503), so each test below fails if a key is tagged wrong:
 * admission exact at the pool edge across two instances, chat (plain and streamed) settling to the ledger,
 * rate limits whose keys live on different slots, revocation over pub/sub, and the sweeper finding
 * reservations in every shard.
 */
import OpenAI from 'openai';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { formatMicros } from '../../../server/config/money.ts';
import { CLUSTER_SHARDS, poolKey, RedisPoolStore, shardTag } from '../../../server/metering/pool.redis-store.ts';
import { settled, startApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';
import { startRedisCluster, type TestRedisCluster } from '../../helpers/redis-cluster.ts';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { clusterNodes } from '../../../server/infra/redis.ts';
import { Throttle } from '../../../server/rate-limit/throttle.ts';
import { ConnectionRecorder } from '../../../server/modules/enterprise/connections.ts';
import type { EnterpriseEvents } from '../../../server/modules/enterprise/enterprise.events.ts';
import { createMember, ledgerRows, relaxedLimits } from '../gateway/harness.ts';

const k = 7;
const maxTokens = 2000;
const messages = [{ role: 'user' as const, content: 'Count to three, slowly. #cluster' }];
const params = { model: 'svc-2.1-fast', messages, max_tokens: maxTokens };
const requestBytes = Buffer.byteLength(JSON.stringify(params));
// Fast class: 42,000 / 84,000 micros per 1M tokens after the promotion (as in quota.test.ts).
const reservation = Math.ceil((requestBytes * 42_000 + maxTokens * 84_000) / 1_000_000);
const dayLimit = k * reservation + Math.floor(reservation / 2);
const payerPerMinute = 3;

const plans = {
  ...defaultPlans,
  free: {
    name: 'Free',
    requestsPerMinute: 100_000,
    pools: { fast: { day: formatMicros(dayLimit), week: 100, month: 100 }, premium: { day: 1, week: 5, month: 20 } },
    packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }],
  },
  pro: { ...defaultPlans.pro, requestsPerMinute: payerPerMinute },
};

let cluster: TestRedisCluster;
let database: TestDatabase;
let upstream: ScriptedUpstream;
let one: TestApp;
let two: TestApp;
let inspect: Cluster;
const keyPrefix = `svc-cluster:${process.pid}:`;

beforeAll(async () => {
  cluster = await startRedisCluster();
  database = await createTestDatabase();
  // The quota-edge requests (`#cluster` in the message) are slow upstream, and each bills its whole
  // reservation: a turn that settles early frees no room, so exactly k fit however slowly a loaded machine
  // sends the 200.
  upstream = await startScriptedUpstream();
  const wholeReservation = { prompt_tokens: requestBytes, completion_tokens: maxTokens, total_tokens: requestBytes + maxTokens };
  upstream.setScript((body) => (JSON.stringify(body.messages).includes('#cluster') ? { latencyMs: 3000, usageOverride: wholeReservation } : undefined));
  const config = {
    server: { logLevel: 'silent' },
    database: { url: database.url },
    redis: { url: cluster.url, keyPrefix },
    gateway: { sweepIntervalSeconds: 3600 },
  };
  const options = { config: { ...relaxedLimits, plans }, env: { SVC_UPSTREAM_URL: upstream.url } };
  one = await startApp(config, options);
  two = await startApp(config, options);
  inspect = cluster.client(keyPrefix);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([one?.close(), two?.close()]);
  await upstream?.close();
  await database?.drop();
  await cluster?.stop();
});

/** Keys under this file's prefix on every master (KEYS is per node on a cluster). */
async function keys(pattern: string): Promise<string[]> {
  const perNode = await Promise.all(inspect.nodes('master').map((node) => node.keys(`${keyPrefix}${pattern}`)));
  return perNode.flat().map((key) => key.slice(keyPrefix.length));
}

describe('Redis Cluster', () => {
  it('runs in cluster mode, with payers spread over the masters', async () => {
    expect(one.app.services.redis.cluster).toBe(true);
    expect(one.app.services.redis.redis!.isCluster).toBe(true);
    const slots = new Set<number>();
    for (let n = 0; n < 64; n++) slots.add(Number(await inspect.cluster('KEYSLOT', `x${shardTag(true, `payer-${n}`)}`)));
    expect(slots.size).toBeGreaterThan(16);
    expect(shardTag(true, 'a')).toMatch(/^\{m\d+\}$/);
    expect(Number(shardTag(true, 'a').slice(2, -1))).toBeLessThan(CLUSTER_SHARDS);
  });

  it(`admits exactly ${k} of 200 simultaneous requests across two instances`, async () => {
    const member = await createMember(one);
    const clients = [one.url, two.url].map((url) => new OpenAI({ apiKey: member.key, baseURL: `${url}/v1`, maxRetries: 0 }));
    let release!: () => void;
    const barrier = new Promise<void>((resolve) => (release = resolve));
    const before = upstream.stats.requests;
    const attempts = Array.from({ length: 200 }, async (_, i) => {
      await barrier;
      return clients[i % 2]!.chat.completions.create(params).then(
        () => 'ok' as const,
        (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
      );
    });
    release();
    const results = await Promise.all(attempts);
    expect(results.filter((r) => r === 'ok')).toHaveLength(k);
    for (const error of results.filter((r) => r !== 'ok')) {
      expect(error.status).toBe(402);
      expect(error.code).toBe('quota_exceeded');
    }
    expect(upstream.stats.requests - before).toBe(k);

    const rows = await ledgerRows(database, member.accountId, k);
    expect(rows).toHaveLength(k);
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    expect(billed).toBeLessThanOrEqual(dayLimit);
    await settled(one, two);
    const windows = one.app.services.windows.current();
    const tag = shardTag(true, member.accountId);
    expect(Number(await inspect.get(poolKey(member.accountId, 'fast', windows.day.key, tag)))).toBe(billed);
    expect(await inspect.zcard(`res:index${tag}`)).toBe(0);
  });

  it('chat, plain and streamed, settles to the ledger with nothing left reserved', async () => {
    const member = await createMember(two);
    const plain = await member.client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hello' }] });
    expect(plain.choices[0]!.message.content).toBe('Hello from the scripted upstream.');
    const client = new OpenAI({ apiKey: member.key, baseURL: `${one.url}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'stream' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('tok '.repeat(8));
    expect(usage?.completion_tokens).toBe(8);

    const rows = await ledgerRows(database, member.accountId, 2);
    expect(rows.map((row) => row.stream).sort()).toEqual([false, true]);
    await settled(one, two);
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    expect(billed).toBeGreaterThan(0);
    const tag = shardTag(true, member.accountId);
    const windows = one.app.services.windows.current();
    expect(Number(await inspect.get(poolKey(member.accountId, 'fast', windows.day.key, tag)))).toBe(billed);
    expect(await inspect.zcard(`streams:${member.accountId}${tag}`)).toBe(0);
    expect(await keys(`res:mbr*`)).toEqual([]);
    // A turn admitted under a lease keeps its final checkpoint (its ledger row, in case the instance dies
    // first) until the lease is returned; any left is such a row, already written.
    for (const key of await keys(`ckpt:*`)) {
      const entry = JSON.parse((await inspect.get(key))!) as { requestId: string; final?: boolean };
      expect(entry.final, key).toBe(true);
      expect((await database.query('select 1 from usage_ledger where request_id = $1', [entry.requestId])).rows, key).toHaveLength(1);
    }
    // The usage page reads the same counters.
    const usagePage = await fetch(`${one.url}/api/membership/usage`, { headers: { authorization: `Bearer ${member.key}` } });
    const report = (await usagePage.json()) as { pools: { class: string; window: string; used: { amountMicros: number } }[] };
    expect(report.pools.find((p) => p.class === 'fast' && p.window === 'day')!.used.amountMicros).toBe(billed);
  });

  it('rate limits per payer hold across instances; per IP on its own slot', async () => {
    const member = await createMember(one, { planPackage: 'pro' });
    const clients = [one, two].map((app) => new OpenAI({ apiKey: member.key, baseURL: `${app.url}/v1`, maxRetries: 0 }));
    const statuses: number[] = [];
    for (let i = 0; i < payerPerMinute + 2; i++) {
      statuses.push(
        await clients[i % 2]!.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hi' }] }).then(
          () => 200,
          (error: InstanceType<typeof OpenAI.APIError>) => error.status ?? 0,
        ),
      );
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);

    // An instance with a tight per-IP limit (its own prefix, so the other tests' traffic does not count).
    const strict = await startApp(
      { server: { logLevel: 'silent' }, database: { url: database.url }, redis: { url: cluster.url, keyPrefix: `${keyPrefix}ip:` } },
      { config: { plans, rateLimits: { ipPerMinute: 2, concurrentStreamsPerAccount: 10 } }, env: { SVC_UPSTREAM_URL: upstream.url } },
    );
    try {
      const other = await createMember(strict);
      const results: number[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${strict.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hi' }] }),
        });
        results.push(response.status);
        if (response.status === 429) expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      expect(results).toEqual([200, 200, 429]);
    } finally {
      await strict.close();
    }
  });

  it('a limiter call whose rules hash to different slots is all or nothing', async () => {
    const limiter = one.app.services.rateLimits;
    const a = { key: `cluster-a:${Date.now()}`, limit: 2, periodMs: 60_000 };
    // A second key on another slot than the first.
    let b = { key: `cluster-b:${Date.now()}:0`, limit: 5, periodMs: 60_000 };
    const slotA = Number(await inspect.cluster('KEYSLOT', `${keyPrefix}rl:${a.key}`));
    for (let n = 1; Number(await inspect.cluster('KEYSLOT', `${keyPrefix}rl:${b.key}`)) === slotA; n++) b = { ...b, key: `cluster-b:${Date.now()}:${n}` };
    expect((await limiter.hit([a, b])).allowed).toBe(true);
    const second = await limiter.hit([a, b]);
    expect(second).toMatchObject({ allowed: true, remaining: 0 });
    expect(second.rule.key).toBe(a.key);
    const refused = await limiter.hit([a, b]);
    expect(refused.allowed).toBe(false);
    expect(refused.rule.key).toBe(a.key);
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    // The refused call took nothing from b: two counted, three left.
    expect((await limiter.hit([b])).remaining).toBe(2);

    // Wrong-guess counters (MULTI on one key) work on the cluster too.
    const counter = `cluster-guess:${Date.now()}`;
    const [oneThrottle, twoThrottle] = [one, two].map((app) => new Throttle(app.app.services.redis, app.app.services.rateLimits));
    expect(await oneThrottle!.increment(counter, 60_000)).toBe(1);
    expect(await twoThrottle!.increment(counter, 60_000)).toBe(2);
    expect(await oneThrottle!.ttl(counter)).toBeGreaterThan(0);
  });

  it('organisation-key connection counts (a three-key script) run on one slot', async () => {
    const errors: unknown[] = [];
    const changed: string[][] = [];
    const { services } = one.app;
    const recorder = new ConnectionRecorder(services.db, services.redis.redis, { connectionsChanged: (ids: string[]) => changed.push(ids) } as unknown as EnterpriseEvents, (error) => errors.push(error));
    recorder.record('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '192.0.2.1');
    recorder.record('00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '192.0.2.1');
    await expect.poll(() => inspect.hget('{enterprise:connections}:count', '00000000-0000-4000-8000-000000000001|00000000-0000-4000-8000-000000000002|192.0.2.1')).toBe('2');
    await recorder.close();
    expect(errors).toEqual([]);
    expect(await inspect.exists('{enterprise:connections}:count')).toBe(0);
  });

  it('a master that lost its data: its shards are reconciled against the ledger before they admit again', async () => {
    const member = await createMember(one);
    const hello = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: 'hello' }] };
    await member.client.chat.completions.create(hello);
    await ledgerRows(database, member.accountId, 1);
    await settled(one, two);
    const tag = shardTag(true, member.accountId);
    const key = poolKey(member.accountId, 'fast', one.app.services.windows.current().day.key, tag);
    const billedOnce = Number((await ledgerRows(database, member.accountId, 1))[0]!.cost_micros);
    expect(Number(await inspect.get(key))).toBe(billedOnce);
    // The master holding the payer's shard restarts empty (no persistence): its counters and epoch are gone.
    const owners = [];
    // (A node that does not serve the key's slot answers MOVED.)
    for (const node of inspect.nodes('master')) if ((await node.exists(`${keyPrefix}${key}`).catch(() => 0)) === 1) owners.push(node);
    expect(owners).toHaveLength(1);
    await owners[0]!.flushall();
    expect(await inspect.exists(`pools:epoch${tag}`)).toBe(0);
    // The next admission in that shard reconciles first: the pool holds what the ledger billed, plus the new request.
    await member.client.chat.completions.create(hello);
    const rows = await ledgerRows(database, member.accountId, 2);
    await settled(one, two);
    expect(Number(await inspect.get(key))).toBe(rows.reduce((sum, row) => sum + Number(row.cost_micros), 0));
    expect(await inspect.exists(`pools:epoch${tag}`)).toBe(1);
  });

  it('REDIS_URL names a cluster as redis+cluster://host:port,… or as a list of redis:// URLs', () => {
    expect(clusterNodes('redis://127.0.0.1:6379')).toBeNull();
    expect(clusterNodes('redis+cluster://a:7001,b:7002')).toEqual({ nodes: [{ host: 'a', port: 7001 }, { host: 'b', port: 7002 }], tls: false, username: undefined, password: undefined });
    expect(clusterNodes('rediss+cluster://user:p%40ss@a:7001,b')).toEqual({ nodes: [{ host: 'a', port: 7001 }, { host: 'b', port: 6379 }], tls: true, username: 'user', password: 'p@ss' });
    expect(clusterNodes('redis://:secret@a:7001,redis://b:7002')).toMatchObject({ nodes: [{ host: 'a', port: 7001 }, { host: 'b', port: 7002 }], password: 'secret', tls: false });
  });

  it('a key revoked on one instance fails at once on the other (pub/sub on the cluster)', async () => {
    const member = await createMember(one);
    const models = (app: TestApp) => fetch(`${app.url}/v1/models`, { headers: { authorization: `Bearer ${member.key}` } });
    await expect.poll(() => two.app.services.identity.hearingInvalidations).toBe(true);
    expect((await models(one)).status).toBe(200);
    expect((await models(two)).status).toBe(200);
    const [key] = await one.app.services.apiKeys.listForAccount(member.accountId);
    await one.app.services.apiKeys.revokeForAccount(member.accountId, key!.id);
    await expect.poll(async () => (await models(two)).status, { timeout: 3000, interval: 25 }).toBe(401);
    expect((await models(one)).status).toBe(401);
  });

  it('usage events reach a watcher on the other instance (GraphQL pub/sub on the cluster)', async () => {
    const member = await createMember(one);
    const watch = two.app.services.usage.events.watch(member.accountId);
    const initial = (await watch.next()).value; // the initial state, at the instance's current generation
    expect(initial).toEqual(expect.any(Number));
    const next = watch.next();
    await member.client.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hello' }] });
    expect((await next).value).toBeGreaterThan(initial);
    await watch.return?.();
  });

  it('the sweeper finds expired and orphaned reservations in every shard', async () => {
    const { services } = one.app;
    const windows = services.windows.current();
    const members = await Promise.all([createMember(one), createMember(one), createMember(one)]);
    const admit = (payerId: string, requestId: string, ttlMs: number) =>
      services.pools.admit({
        requestId,
        payerId,
        class: 'fast',
        windows,
        reserveMicros: 1000,
        limits: { day: 1e9, week: 1e9, month: 1e9 },
        rateRules: [{ key: `sweep:${requestId}`, limit: 100, periodMs: 60_000, scope: 'payer' }],
        streamCap: 0,
        ttlMs,
      });
    const ids = members.map((_, i) => `mbr_sweep${process.pid}x${Date.now()}x${i}`);
    for (const [i, member] of members.entries()) expect((await admit(member.accountId, ids[i]!, 60_000)).ok).toBe(true);
    const tags = members.map((member) => shardTag(true, member.accountId));
    for (const [i, member] of members.entries()) expect(Number(await inspect.get(poolKey(member.accountId, 'fast', windows.day.key, tags[i])))).toBe(1000);
    // Past their TTL (a minute from now): settled at zero by the sweeper, whichever shard they are in.
    expect(await services.sweeper.sweep(Date.now() + 120_000)).toBe(3);
    for (const [i, member] of members.entries()) {
      expect(Number(await inspect.get(poolKey(member.accountId, 'fast', windows.day.key, tags[i])))).toBe(0);
      expect(await inspect.exists(`res:${ids[i]}${tags[i]}`)).toBe(0);
    }
    const abandoned = await database.query(`select count(*)::int as n from usage_ledger where request_id = any($1) and status = 'abandoned'`, [ids]);
    expect(abandoned.rows[0].n).toBe(3);

    // An instance that stopped heartbeating: its reservations are settled at once, not at their TTL.
    const deadId = `dead-${process.pid}-${Date.now()}`;
    const dead = new RedisPoolStore(services.redis.redis!, deadId);
    const orphanId = `mbr_orphan${process.pid}x${Date.now()}`;
    const member = members[0]!;
    expect(
      (
        await dead.admit({
          requestId: orphanId,
          payerId: member.accountId,
          class: 'fast',
          windows,
          reserveMicros: 500,
          limits: { day: 1e9, week: 1e9, month: 1e9 },
          rateRules: [{ key: `ip:orphan-${orphanId}`, limit: 100, periodMs: 60_000 }],
          streamCap: 1,
          ttlMs: 3_600_000,
        })
      ).ok,
    ).toBe(true);
    await inspect.zadd('instances', 0, deadId);
    expect(await inspect.zcard(`streams:${member.accountId}${tags[0]}`)).toBe(1);
    expect(await services.sweeper.sweep()).toBe(1);
    expect(Number(await inspect.get(poolKey(member.accountId, 'fast', windows.day.key, tags[0])))).toBe(0);
    expect(await inspect.zcard(`streams:${member.accountId}${tags[0]}`)).toBe(0);
    // The next sweep forgets the instance (nothing of it is left in any shard).
    expect(await services.sweeper.sweep()).toBe(0);
    expect(await inspect.zscore('instances', deadId)).toBeNull();
  });
});
