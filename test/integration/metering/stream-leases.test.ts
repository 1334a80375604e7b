/**
 * Stream admission under leases (pool.leasing-store.ts): a stream lease takes concurrent-stream slots in
 * Redis with its budget, so the per-account cap holds exactly across instances, leases and the exact path;
 * unused slots are freed when a lease goes quiet, used ones when its streams have ended; a dead instance's
 * leased stream is billed from its last checkpoint, once, and its slots freed by the sweeper. Against real Redis and PostgreSQL, two instances.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertLedgerRows } from '../../../server/metering/ledger.ts';
import { LEASE_PREFIX, LeasingPoolStore, type LeaseOptions } from '../../../server/metering/pool.leasing-store.ts';
import { poolKey, RedisPoolStore } from '../../../server/metering/pool.redis-store.ts';
import type { AdmissionRequest, ReservationRef } from '../../../server/metering/pool.store.ts';
import { settled, startApp, type TestApp } from '../../helpers/app.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import { createMember, ledgerRows, startHarness, type Harness } from '../gateway/harness.ts';

const cap = 20;
const leases = { admissionLeases: { enabled: true, chunkRequests: 8, admitWindowSeconds: 1, hotRequests: 1, idleSeconds: 0.2 }, sweepIntervalSeconds: 3600 };
const limits = { rateLimits: { ipPerMinute: 100_000, concurrentStreamsPerAccount: cap } };

let h: Harness;
let second: TestApp;

beforeAll(async () => {
  h = await startHarness({ config: { ...limits, gateway: leases } });
  // Streams that stay open long enough for every admission of a burst to happen while they run.
  h.upstream.setScript((body) => (JSON.stringify(body.messages).includes('#held') ? { firstChunkDelayMs: 1500, intervalMs: 20 } : undefined));
  second = await startApp(h.mode.config, { config: { ...limits, gateway: leases }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
}, 60_000);
afterAll(async () => {
  await second?.close();
  await h?.close();
});

const redis = () => h.app.app.services.redis.redis!;
const openStreams = (payerId: string) => redis().zcard(`streams:${payerId}`);
const poolDay = async (payerId: string) => Number(await redis().get(poolKey(payerId, 'fast', h.app.app.services.windows.current().day.key)));

/** A store of an instance of its own (its id in Redis), leasing from the first request. */
function instance(id: string, options: Partial<LeaseOptions> = {}): LeasingPoolStore {
  return new LeasingPoolStore(new RedisPoolStore(redis(), id), {
    chunkRequests: 8,
    admitWindowMs: 60_000,
    reservationTtlMs: 3_600_000,
    refusedForMs: 60_000,
    hotRequests: 1,
    idleMs: 3_600_000,
    onError: () => undefined,
    ...options,
  });
}

let serial = 0;
function stream(payerId: string): AdmissionRequest {
  return {
    requestId: `mbr_strm${process.pid}x${Date.now()}x${serial++}`,
    payerId,
    class: 'fast',
    windows: h.app.app.services.windows.current(),
    reserveMicros: 1000,
    limits: { day: 1_000_000_000, week: 1_000_000_000, month: 1_000_000_000 },
    rateRules: [{ key: `stream-lease:${payerId}`, limit: 100_000, periodMs: 60_000 }],
    streamCap: cap,
    ttlMs: 3_600_000,
  };
}
const refOf = (request: AdmissionRequest): ReservationRef => ({ requestId: request.requestId, payerId: request.payerId, class: request.class, windows: request.windows, stream: true });

describe('stream admission under leases', () => {
  it(`the concurrent-stream cap holds exactly across a lease on one instance and leases, then the exact path, on another: ${cap} open, never more`, async () => {
    const payer = (await createMember(h.app)).accountId;
    const a = instance(`a-${process.pid}-${Date.now()}`);
    const b = instance(`b-${process.pid}-${Date.now()}`);
    try {
      const admitted: AdmissionRequest[] = [];
      for (let i = 0; i < 3; i++) {
        const request = stream(payer);
        expect((await a.admit(request)).ok).toBe(true);
        admitted.push(request);
      }
      // A's lease holds a quarter of the free slots: five, three of them used.
      expect(await openStreams(payer)).toBe(cap / 4);
      expect(a.leaseOf(admitted[0]!.requestId)?.startsWith(LEASE_PREFIX)).toBe(true);
      let onB = 0;
      for (;;) {
        const request = stream(payer);
        const admission = await b.admit(request);
        if (!admission.ok) {
          expect(admission).toEqual({ ok: false, reason: 'stream_cap', cap });
          break;
        }
        admitted.push(request);
        onB++;
      }
      // B leased smaller and smaller chunks, then took the exact path up to the cap; A's two unused slots stayed A's.
      expect(onB).toBe(cap - cap / 4);
      const leasedOnB = admitted.slice(3).filter((request) => b.leaseOf(request.requestId) !== undefined).length;
      expect(leasedOnB).toBeGreaterThanOrEqual(2);
      expect(leasedOnB).toBeLessThan(onB);
      for (let i = 0; i < 2; i++) {
        const request = stream(payer);
        expect((await a.admit(request)).ok).toBe(true);
        admitted.push(request);
      }
      expect(await a.admit(stream(payer))).toEqual({ ok: false, reason: 'stream_cap', cap });
      expect(admitted).toHaveLength(cap);
      expect(await openStreams(payer)).toBe(cap);
      // Every stream ends: each settles on its own instance, the leases are returned, every slot is free.
      await a.settle(admitted.filter((request) => a.leaseOf(request.requestId)).map((request) => ({ ref: refOf(request), costMicros: 100 })));
      await b.settle(admitted.slice(3, 3 + onB).map((request) => ({ ref: refOf(request), costMicros: 100 })));
      await expect.poll(() => openStreams(payer), { timeout: 5000, interval: 50 }).toBe(0);
      await expect.poll(() => poolDay(payer), { timeout: 5000, interval: 50 }).toBe(cap * 100);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a stream lease that goes quiet frees its unused slots at once; the used one when its stream ends', async () => {
    const payer = (await createMember(h.app)).accountId;
    const quiet = instance(`q-${process.pid}-${Date.now()}`, { idleMs: 100 });
    try {
      const request = stream(payer);
      expect((await quiet.admit(request)).ok).toBe(true);
      expect(await openStreams(payer)).toBe(cap / 4);
      await expect.poll(() => openStreams(payer), { timeout: 2000, interval: 20 }).toBe(1);
      await quiet.settle([{ ref: refOf(request), costMicros: 250 }]);
      await expect.poll(() => openStreams(payer), { timeout: 2000, interval: 20 }).toBe(0);
      expect(await poolDay(payer)).toBe(250);
    } finally {
      await quiet.close();
    }
  });

  it("a dead instance's leased stream is billed from its last checkpoint; a stream that settled keeps its own row", async () => {
    const payer = (await createMember(h.app)).accountId;
    const { services } = h.app.app;
    const deadId = `dead-stream-${process.pid}-${Date.now()}`;
    const dead = instance(deadId);
    const [finished, running] = [stream(payer), stream(payer)];
    expect((await dead.admit(finished)).ok).toBe(true);
    expect((await dead.admit(running)).ok).toBe(true);
    const leaseId = dead.leaseOf(running.requestId)!;
    expect(leaseId.startsWith(LEASE_PREFIX)).toBe(true);
    // Both checkpoint; one then ends and its row is written; the instance dies with the other still running.
    await dead.checkpoint([
      { ref: refOf(finished), entry: ledgerEntry(payer, { requestId: finished.requestId, stream: true, costMicros: 300, reservedMicros: 1000 }) },
      { ref: refOf(running), entry: ledgerEntry(payer, { requestId: running.requestId, stream: true, costMicros: 450, reservedMicros: 1000 }) },
    ]);
    await insertLedgerRows(services.db, services.config.currency, [ledgerEntry(payer, { requestId: finished.requestId, stream: true, costMicros: 700, reservedMicros: 1000, leaseId })]);
    await redis().zadd('instances', 0, deadId);
    expect(await services.sweeper.sweep()).toBe(1);
    const rows = await ledgerRows(h.database, payer, 2);
    const byId = new Map(rows.map((row) => [row.request_id, row as unknown as { cost_micros: string; status: string; lease_id: string; estimated: boolean }]));
    expect(byId.get(finished.requestId)).toMatchObject({ cost_micros: '700', lease_id: leaseId });
    expect(byId.get(running.requestId)).toMatchObject({ cost_micros: '450', status: 'abandoned', estimated: true, lease_id: leaseId });
    expect(rows).toHaveLength(2);
    expect(await poolDay(payer)).toBe(700 + 450);
    expect(await redis().exists(`res:${leaseId}`)).toBe(0);
    // Its stream slots are free again (the stream cap is not held by a dead instance until they expire).
    expect(await openStreams(payer)).toBe(0);
    await dead.close();
  });

  it(`over HTTP, 3 × ${cap} streams at once across two instances: exactly ${cap} stream, the rest get 429, and every slot is free after`, async () => {
    const member = await createMember(h.app);
    const clients = [h.app.url, second.url].map((url) => new OpenAI({ apiKey: member.key, baseURL: `${url}/v1`, maxRetries: 0 }));
    let release!: () => void;
    const barrier = new Promise<void>((resolve) => (release = resolve));
    const attempts = Array.from({ length: 3 * cap }, async (_, i) => {
      await barrier;
      try {
        const chunks = await clients[i % 2]!.chat.completions.create({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: `#held ${i}` }], max_tokens: 64, stream: true });
        let text = '';
        for await (const chunk of chunks) text += chunk.choices[0]?.delta.content ?? '';
        return text;
      } catch (error) {
        return (error as InstanceType<typeof OpenAI.APIError>).status ?? -1;
      }
    });
    release();
    const results = await Promise.all(attempts);
    expect(results.filter((r) => typeof r === 'string' && r.length > 0)).toHaveLength(cap);
    expect(results.filter((r) => r === 429)).toHaveLength(2 * cap);
    await settled(h.app, second);
    const rows = await ledgerRows(h.database, member.accountId, cap);
    expect(rows.filter((row) => (row as unknown as { lease_id: string | null }).lease_id !== null).length).toBeGreaterThan(0);
    await expect.poll(() => openStreams(member.accountId), { timeout: 5000, interval: 50 }).toBe(0);
  }, 30_000);
});
