/**
 * Admission leases across two instances sharing PostgreSQL and Redis: never an overdraft, exact admission
 * at a pool's edge (a small pool is never leased; a larger one is leased until two chunks are left and then
 * admitted one by one), ledger rows naming their lease, unused budget returned when a lease retires and on
 * shutdown, and a dead instance's leases returned by the sweeper to exactly what the ledger billed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { formatMicros } from '../../../server/config/money.ts';
import { insertLedgerRows } from '../../../server/metering/ledger.ts';
import { LEASE_PREFIX, LeasingPoolStore } from '../../../server/metering/pool.leasing-store.ts';
import { poolKey, RedisPoolStore } from '../../../server/metering/pool.redis-store.ts';
import { freePort, settled, startApp, type TestApp } from '../../helpers/app.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import { createMember, ledgerRows, relaxedLimits, startHarness, type Harness } from '../gateway/harness.ts';

const maxTokens = 2000;
const params = (tag: string) => ({ model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: `Count to three. ${tag}` }], max_tokens: maxTokens });
const reservationOf = (tag: string) => Math.ceil((Buffer.byteLength(JSON.stringify(params(tag))) * 42_000 + maxTokens * 84_000) / 1_000_000);
const chunkRequests = 8;
const small = 7;
const large = 100;
const smallLimit = small * reservationOf('#small') + Math.floor(reservationOf('#small') / 2);
const largeLimit = large * reservationOf('#large') + Math.floor(reservationOf('#large') / 2);
const leases = { admissionLeases: { enabled: true, chunkRequests, admitWindowSeconds: 0.5, hotRequests: 1 } };

const plan = (dayLimit: number) => ({
  requestsPerMinute: 100_000,
  pools: { fast: { day: formatMicros(dayLimit), week: 100, month: 100 }, premium: { day: 1, week: 5, month: 20 } },
});
const plans = {
  ...defaultPlans,
  free: { name: 'Free', ...plan(smallLimit), packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }] },
  pro: { ...defaultPlans.pro, ...plan(largeLimit) },
  max: { ...defaultPlans.max, ...plan(largeLimit), requestsPerMinute: 3 },
};

let h: Harness;
let second: TestApp;

beforeAll(async () => {
  // Slow replies for the edge tests, each billing its whole reservation (the cost is capped at it): a turn
  // that settles before a loaded machine has sent all 200 frees no room, so exactly k fit at any speed.
  h = await startHarness({ config: { plans, gateway: { ...leases, sweepIntervalSeconds: 3600 } } });
  const wholeReservation = { prompt_tokens: 1_000_000, completion_tokens: maxTokens };
  h.upstream.setScript((body) => (JSON.stringify(body.messages).includes('#slow') ? { latencyMs: 2500, usageOverride: wholeReservation } : undefined));
  second = await startApp(h.mode.config, { config: { ...relaxedLimits, plans, gateway: { ...leases, sweepIntervalSeconds: 3600 } }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
}, 60_000);
afterAll(async () => {
  await second?.close();
  await h?.close();
});

async function burst(member: { key: string }, tag: string, count: number) {
  const clients = [h.app.url, second.url].map((url) => new OpenAI({ apiKey: member.key, baseURL: `${url}/v1`, maxRetries: 0 }));
  let release!: () => void;
  const barrier = new Promise<void>((resolve) => (release = resolve));
  const attempts = Array.from({ length: count }, async (_, i) => {
    await barrier;
    return clients[i % 2]!.chat.completions.create(params(`${tag} #slow`)).then(
      () => 'ok' as const,
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    );
  });
  release();
  return Promise.all(attempts);
}

const redis = () => h.app.app.services.redis.redis!;
/** A leasing store of its own (as another instance's would be) on the first app's Redis: long windows, leased from the first request. */
const leasingStore = (instanceId: string) =>
  new LeasingPoolStore(new RedisPoolStore(redis(), instanceId), {
    chunkRequests,
    admitWindowMs: 60_000,
    reservationTtlMs: 3_600_000,
    refusedForMs: 1000,
    hotRequests: 1,
    idleMs: 3_600_000,
    onError: () => undefined,
  });
const poolDay = async (accountId: string) => Number(await redis().get(poolKey(accountId, 'fast', h.app.app.services.windows.current().day.key)));
/** Leases recorded in Redis (of one payer when given). */
const openLeaseIds = async (payerId?: string) => {
  const ids = (await redis().zrange('res:index', 0, -1)).filter((id) => id.startsWith(LEASE_PREFIX));
  if (!payerId) return ids;
  const records = ids.length > 0 ? await redis().mget(ids.map((id) => `res:${id}`)) : [];
  return ids.filter((_, i) => records[i]?.split('|')[1] === payerId);
};

describe('admission leases', () => {
  it(`a small pool is never leased: exactly ${small} of 200 simultaneous requests across two instances`, async () => {
    const member = await createMember(h.app);
    const before = h.upstream.stats.requests;
    const results = await burst(member, '#small', 200);
    expect(results.filter((r) => r === 'ok')).toHaveLength(small);
    for (const error of results.filter((r) => r !== 'ok')) expect(error.status, JSON.stringify(error.error)).toBe(402);
    expect(h.upstream.stats.requests - before).toBe(small);
    const rows = await ledgerRows(h.database, member.accountId, small);
    expect(rows).toHaveLength(small);
    const { rows: leased } = await h.database.query('select count(*)::int as n from usage_ledger where account_id = $1 and lease_id is not null', [member.accountId]);
    expect(leased[0].n).toBe(0);
    await settled(h.app, second);
    expect(await poolDay(member.accountId)).toBe(rows.reduce((sum, row) => sum + Number(row.cost_micros), 0));
  });

  it(`a larger pool is leased, then admitted one by one at its end: exactly ${large} of 200, never more`, async () => {
    const member = await createMember(h.app, { planPackage: 'pro' });
    const before = h.upstream.stats.requests;
    const results = await burst(member, '#large', 200);
    const admitted = results.filter((r) => r === 'ok').length;
    for (const error of results.filter((r) => r !== 'ok')) expect(error.status, JSON.stringify(error.error)).toBe(402);
    expect(admitted).toBe(large);
    expect(h.upstream.stats.requests - before).toBe(large);
    const rows = await ledgerRows(h.database, member.accountId, large);
    expect(rows).toHaveLength(large);
    // Some went through leases — of `chunkRequests` worst cases at first, twice that after one was used up
    // within its window (up to 32×), smaller as the pool filled (at most a quarter of what was left), at
    // least two — and the last ones through the exact path.
    const { rows: perLease } = await h.database.query('select lease_id, count(*)::int as n from usage_ledger where account_id = $1 and lease_id is not null group by lease_id', [member.accountId]);
    expect(perLease.reduce((sum, row) => sum + row.n, 0)).toBeGreaterThanOrEqual(2 * chunkRequests);
    for (const row of perLease) {
      expect(row.n).toBeGreaterThanOrEqual(1);
      expect(row.n).toBeLessThanOrEqual(32 * chunkRequests);
    }
    // (Whether a smaller lease was taken near the end depends on how the 200 requests interleave across the
    // two instances: on a loaded machine every lease can be a full one. Exactness above is what must hold.)
    // Settled and the leases returned (their admit window is 0.5 s): the pool holds exactly what was billed.
    const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
    expect(billed).toBeLessThanOrEqual(largeLimit);
    await settled(h.app, second);
    await expect.poll(() => openLeaseIds(member.accountId), { timeout: 5000, interval: 50 }).toEqual([]);
    expect(await poolDay(member.accountId)).toBe(billed);
  });

  it('rate limits hold under leases: a lease takes only the requests a rule has left', async () => {
    const member = await createMember(h.app, { planPackage: 'max_x5' });
    const clients = [h.app, second].map((app) => new OpenAI({ apiKey: member.key, baseURL: `${app.url}/v1`, maxRetries: 0 }));
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push(
        await clients[i % 2]!.chat.completions.create(params('#rate')).then(
          () => 200,
          (error: InstanceType<typeof OpenAI.APIError>) => error.status ?? 0,
        ),
      );
    }
    // Exactly the limit, whichever instance's lease held the requests (the other one is refused meanwhile).
    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(3);
  });

  it('a casual payer is not leased; a busy one is, and its rate-limit headers count the rule, not the lease', async () => {
    const member = await createMember(h.app, { planPackage: 'pro' });
    const busy = await startApp(h.mode.config, {
      config: { ...relaxedLimits, plans, gateway: { admissionLeases: { enabled: true, chunkRequests, admitWindowSeconds: 300, hotRequests: 4, idleSeconds: 300 }, sweepIntervalSeconds: 3600 } },
      env: { SVC_UPSTREAM_URL: h.upstream.url },
    });
    try {
      const client = new OpenAI({ apiKey: member.key, baseURL: `${busy.url}/v1`, maxRetries: 0 });
      const remaining: number[] = [];
      for (let i = 0; i < 7; i++) {
        const { response } = await client.chat.completions.create(params('#busy')).withResponse();
        remaining.push(Number(response.headers.get('x-ratelimit-remaining-requests')));
      }
      await settled(busy);
      const { rows } = await h.database.query('select lease_id from usage_ledger where account_id = $1 order by id', [member.accountId]);
      // Three on the exact path (fewer than four within a second), then the lease from the fourth on.
      expect(rows.map((row) => row.lease_id !== null)).toEqual([false, false, false, true, true, true, true]);
      // The rule's own count (it refills between requests), not the lease's few requests left.
      remaining.forEach((left, i) => expect(left).toBeGreaterThanOrEqual(remaining[0]! - i));
      remaining.forEach((left) => expect(left).toBeLessThan(plans.pro.requestsPerMinute));
      expect(remaining[6]).toBeGreaterThan(chunkRequests * 100);
    } finally {
      await busy.close();
    }
  });

  it('a lease that goes quiet gives its unused budget back at once, while its request is still running', async () => {
    const member = await createMember(h.app, { planPackage: 'pro' });
    const client = new OpenAI({ apiKey: member.key, baseURL: `${h.app.url}/v1`, maxRetries: 0 });
    const reserve = reservationOf('#quiet #slow');
    const running = client.chat.completions.create(params('#quiet #slow'));
    // Leased whole first, then (idle 0.2 s) only the running request's worst case stays reserved.
    await expect.poll(() => poolDay(member.accountId), { timeout: 2000, interval: 20 }).toBe(reserve);
    expect(await openLeaseIds(member.accountId)).toHaveLength(1);
    await running;
    await settled(h.app);
    await expect.poll(() => openLeaseIds(member.accountId), { timeout: 5000, interval: 50 }).toEqual([]);
    const rows = await ledgerRows(h.database, member.accountId, 1);
    expect(await poolDay(member.accountId)).toBe(Number(rows[0]!.cost_micros));
  });

  it('a lease is returned on shutdown, keeping exactly what its requests cost', async () => {
    const member = await createMember(h.app, { planPackage: 'pro' });
    const third = await startApp(h.mode.config, {
      config: { ...relaxedLimits, plans, gateway: { admissionLeases: { enabled: true, chunkRequests, admitWindowSeconds: 300, hotRequests: 1, idleSeconds: 300 }, sweepIntervalSeconds: 3600 } },
      env: { SVC_UPSTREAM_URL: h.upstream.url },
    });
    const client = new OpenAI({ apiKey: member.key, baseURL: `${third.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.chat.completions.create(params('#shutdown'));
    await settled(third);
    // The lease is still open (a five-minute admit window): the pool in Redis holds all of it …
    const leaseIds = await openLeaseIds(member.accountId);
    expect(leaseIds).toHaveLength(1);
    expect(await poolDay(member.accountId)).toBe(chunkRequests * reservationOf('#shutdown'));
    // … but the member's usage, read on the instance holding it, shows only what the three requests cost.
    const costs = (await ledgerRows(h.database, member.accountId, 3)).reduce((sum, row) => sum + Number(row.cost_micros), 0);
    const shown = await third.app.services.pools.read(member.accountId, third.app.services.windows.current());
    expect(shown.find((pool) => pool.class === 'fast' && pool.window === 'day')!.usedMicros).toBe(costs);
    expect(shown.find((pool) => pool.class === 'fast' && pool.window === 'month')!.usedMicros).toBe(costs);
    await third.close();
    expect(await openLeaseIds(member.accountId)).toEqual([]);
    const rows = await ledgerRows(h.database, member.accountId, 3);
    expect(rows.map((row) => (row as unknown as { lease_id: string }).lease_id)).toEqual([leaseIds[0], leaseIds[0], leaseIds[0]]);
    expect(await poolDay(member.accountId)).toBe(rows.reduce((sum, row) => sum + Number(row.cost_micros), 0));
  });

  it('kill -9: the sweeper returns the dead instance\'s lease, keeping exactly what the ledger billed under it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-lease-crash-'));
    const configFile = join(dir, 'svc.yaml');
    const redisConfig = (h.mode.config as { redis: { url: string; keyPrefix: string } }).redis;
    writeFileSync(
      configFile,
      JSON.stringify({
        server: { host: '127.0.0.1', logLevel: 'warn' },
        database: { url: h.database.url },
        redis: redisConfig,
        plans,
        rateLimits: relaxedLimits.rateLimits,
        gateway: { admissionLeases: { enabled: true, chunkRequests, admitWindowSeconds: 300, hotRequests: 1, idleSeconds: 300 }, sweepIntervalSeconds: 3600 },
      }),
    );
    const port = await freePort();
    const child = spawn(process.execPath, [resolve('server/main.ts')], {
      env: { ...process.env, SVC_CONFIG: configFile, SVC_UPSTREAM_URL: h.upstream.url, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
      await expect.poll(() => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false), { timeout: 60_000, interval: 100 }).toBe(true);
      const member = await createMember(h.app, { planPackage: 'pro' });
      const client = new OpenAI({ apiKey: member.key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
      for (let i = 0; i < 3; i++) await client.chat.completions.create(params('#crash'));
      // Its three rows are written (under its lease); the lease itself is still open when it dies.
      await expect
        .poll(async () => (await h.database.query('select count(lease_id)::int as n from usage_ledger where account_id = $1', [member.accountId])).rows[0].n, { timeout: 10_000, interval: 50 })
        .toBe(3);
      const [leaseId] = await openLeaseIds(member.accountId);
      expect(leaseId).toBeDefined();
      expect(await poolDay(member.accountId)).toBe(chunkRequests * reservationOf('#crash'));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      const rows = await ledgerRows(h.database, member.accountId, 3);
      const billed = rows.reduce((sum, row) => sum + Number(row.cost_micros), 0);
      // Once its heartbeat is old enough, a sweep on a live instance returns the rest of the lease.
      const sweeper = h.app.app.services.sweeper;
      await expect
        .poll(
          async () => {
            await sweeper.sweep();
            return poolDay(member.accountId);
          },
          { timeout: 30_000, interval: 500 },
        )
        .toBe(billed);
      expect(await redis().exists(`res:${leaseId}`)).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('a lease used up within its window doubles the next, and requests waiting on one it could not cover take the next', async () => {
    const member = await createMember(h.app, { planPackage: 'pro' });
    const { services } = h.app.app;
    const windows = services.windows.current();
    const store = leasingStore(`grow-${process.pid}-${Date.now()}`);
    const limits = { day: 1_000_000_000, week: 1_000_000_000, month: 1_000_000_000 };
    const rateRules = [{ key: `grow-test:${member.accountId}`, limit: 100_000, periodMs: 60_000 }];
    // 56 at once = 8 + 16 + 32: the first lease serves 8, the 48 that waited on it take one of 16, the rest one of 32.
    const requests = Array.from({ length: 7 * chunkRequests }, (_, i) => ({
      requestId: `mbr_grow${process.pid}x${Date.now()}x${i}`,
      payerId: member.accountId,
      class: 'fast' as const,
      windows,
      reserveMicros: 1_000,
      limits,
      rateRules,
      streamCap: 0,
      ttlMs: 3_600_000,
    }));
    const admissions = await Promise.all(requests.map((request) => store.admit(request)));
    expect(admissions.every((admission) => admission.ok)).toBe(true);
    const perLease = new Map<string, number>();
    for (const { requestId } of requests) {
      const lease = store.leaseOf(requestId);
      expect(lease, 'admitted under a lease, not by the exact script').toBeDefined();
      perLease.set(lease!, (perLease.get(lease!) ?? 0) + 1);
    }
    expect([...perLease.values()]).toEqual([chunkRequests, 2 * chunkRequests, 4 * chunkRequests]);
    await store.settle(requests.map(({ requestId, payerId }) => ({ ref: { requestId, payerId, class: 'fast' as const, windows, stream: false }, costMicros: 0 })));
    await store.close();
    expect(await openLeaseIds(member.accountId)).toEqual([]);
    expect(await poolDay(member.accountId)).toBe(0);
  });

  it('a dead instance\'s lease is returned by the sweeper to exactly what the ledger billed under it', async () => {
    const member = await createMember(h.app, { planPackage: 'pro' });
    const { services } = h.app.app;
    const windows = services.windows.current();
    // An instance that admits under a lease, writes two of its three rows, and dies without returning it.
    const deadId = `dead-${process.pid}-${Date.now()}`;
    const dead = leasingStore(deadId);
    const reserve = 5_000;
    const ids = [0, 1, 2].map((i) => `mbr_lease${process.pid}x${Date.now()}x${i}`);
    for (const requestId of ids) {
      const admission = await dead.admit({
        requestId,
        payerId: member.accountId,
        class: 'fast',
        windows,
        reserveMicros: reserve,
        limits: { day: 10_000_000, week: 10_000_000, month: 10_000_000 },
        rateRules: [{ key: `lease-test:${requestId.slice(0, -2)}`, limit: 1000, periodMs: 60_000 }],
        streamCap: 0,
        ttlMs: 3_600_000,
      });
      expect(admission.ok).toBe(true);
    }
    const leaseId = dead.leaseOf(ids[0]!)!;
    expect(leaseId.startsWith(LEASE_PREFIX)).toBe(true);
    expect(ids.map((id) => dead.leaseOf(id))).toEqual([leaseId, leaseId, leaseId]);
    expect(await poolDay(member.accountId)).toBe(chunkRequests * reserve);
    await insertLedgerRows(services.db, services.config.currency, [
      ledgerEntry(member.accountId, { requestId: ids[0]!, costMicros: 1234, reservedMicros: reserve, leaseId }),
      ledgerEntry(member.accountId, { requestId: ids[1]!, costMicros: 4321, reservedMicros: reserve, leaseId }),
    ]);
    // Its heartbeat stops (the sweeper takes it for dead), and the sweeper runs.
    await redis().zadd('instances', 0, deadId);
    expect(await services.sweeper.sweep()).toBe(1);
    expect(await poolDay(member.accountId)).toBe(1234 + 4321);
    expect(await redis().exists(`res:${leaseId}`)).toBe(0);
    // No abandoned row for the lease itself.
    const { rows } = await h.database.query('select count(*)::int as n from usage_ledger where request_id = $1', [leaseId]);
    expect(rows[0].n).toBe(0);
    await dead.close();
  });
});
