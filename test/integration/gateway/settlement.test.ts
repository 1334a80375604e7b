/**
 * Pool accounting moves exactly once per request, whoever gets there: settling the same request twice,
 * or the sweeper racing the owner for a reservation that expired just as its request finished, must
 * leave the pool at the ledger's cost — never the cost twice. And a turn answered but not yet written when
 * its instance dies is billed by the sweeper from its final checkpoint, at its exact cost.
 */
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Settlement } from '../../../server/metering/settlement.ts';
import { Sweeper } from '../../../server/metering/sweeper.ts';
import { ledgerEntry } from '../../helpers/ledger.ts';
import type { ReservationRef } from '../../../server/metering/pool.store.ts';
import { ledgerRows, startHarness, type Harness } from './harness.ts';

let h: Harness;

beforeAll(async () => {
  // The app's own sweeper stays out of the way: each test drives one.
  h = await startHarness({ config: { gateway: { sweepIntervalSeconds: 3600 } } });
});
afterAll(() => h?.close());

const RESERVED = 1000;
const COST = 300;
let seq = 0;

/** Admits one fast-class reservation of RESERVED micros for a new member, as the gateway would. */
async function reserve(ttlMs = 60_000) {
  const member = await h.member();
  const { services } = h.app.app;
  const windows = services.windows.current();
  const requestId = `mbr_settle${process.pid}x${Date.now()}x${++seq}`;
  const admission = await services.pools.admit({
    requestId,
    payerId: member.accountId,
    class: 'fast',
    windows,
    reserveMicros: RESERVED,
    limits: { day: 1e9, week: 1e9, month: 1e9 },
    rateRules: [{ key: `settle-test:${requestId}`, limit: 100, periodMs: 60_000 }],
    streamCap: 0,
    ttlMs,
  });
  expect(admission.ok).toBe(true);
  const ref: ReservationRef = { requestId, payerId: member.accountId, class: 'fast', windows, stream: false };
  const entry = ledgerEntry(member.accountId, { requestId, inputTokens: 1, outputTokens: 2, costMicros: COST, reservedMicros: RESERVED });
  const poolDay = async () => Number(await services.redis.redis!.get(`pool:${member.accountId}:fast:${windows.day.key}`));
  return { member, ref, entry, poolDay };
}

function newSettlement(): Settlement {
  const { services } = h.app.app;
  return new Settlement(services.config, services.db, services.pools, h.app.app.log);
}

describe('pool accounting moves exactly once', () => {
  it('settling the same request twice charges the pool once', async () => {
    const { member, ref, entry, poolDay } = await reserve();
    expect(await poolDay()).toBe(RESERVED);
    const settlement = newSettlement();
    settlement.record(entry, ref);
    settlement.record(entry, ref);
    await settlement.flush();
    await settlement.close();
    expect(await ledgerRows(h.database, member.accountId)).toHaveLength(1);
    expect(await poolDay()).toBe(COST);
  });

  it('the sweeper and a late owner racing for an expired reservation charge the pool once', async () => {
    const { member, ref, entry, poolDay } = await reserve(1);
    const { services } = h.app.app;
    // The owner wrote its ledger row; its pool settlement is about to run when the sweeper finds the
    // reservation expired. The owner settles between the sweeper's read and its settle.
    await h.database.query(
      `insert into usage_ledger (request_id, account_id, payer_id, credential_kind, credential_id, channel, model, routed_model, deployment, class, stream,
         input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, upstream_status, latency_ms)
       values ($1, $2, $2, 'api_key', 'k', 'api', 'svc-2.1-fast', 'svc-2.1-fast', 'default', 'fast', false, 1, 2, false, $3, $4, 'USD', 'ok', 200, 1)`,
      [entry.requestId, member.accountId, COST, RESERVED],
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
    const redis = services.redis.redis!;
    const get = redis.get.bind(redis);
    const spy = vi.spyOn(redis, 'get').mockImplementation((async (key: string) => {
      const value = await get(key);
      if (key === `res:${ref.requestId}`) await services.pools.settle([{ ref, costMicros: COST }]);
      return value;
    }) as typeof redis.get);
    const sweeper = new Sweeper(services.config, services.db, services.pools, services.windows, h.app.app.log);
    try {
      await sweeper.sweep();
    } finally {
      spy.mockRestore();
    }
    expect(await poolDay()).toBe(COST);
    expect(await redis.exists(`res:${ref.requestId}`)).toBe(0);
  });

  it('a pool settlement Redis refused is retried, not left holding the reservation until its TTL', async () => {
    const { ref, entry, poolDay } = await reserve();
    const { services } = h.app.app;
    const spy = vi.spyOn(services.pools, 'settle').mockRejectedValueOnce(new Error('Redis went away'));
    const settlement = newSettlement();
    try {
      settlement.record(entry, ref);
      await settlement.flush();
      const redis = services.redis.redis!;
      const deadline = Date.now() + 3000;
      while ((await redis.exists(`res:${ref.requestId}`)) === 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await redis.exists(`res:${ref.requestId}`)).toBe(0);
      expect(await poolDay()).toBe(COST);
    } finally {
      spy.mockRestore();
      await settlement.close();
    }
  });

  it('under steady traffic rounds start at most every 20 ms, so each carries many turns, and every turn is written', async () => {
    const { services } = h.app.app;
    const member = await h.member();
    const starts: number[] = [];
    const db = { ...services.db, copy: services.db.copy && ((sql: string, data: string) => (starts.push(performance.now()), services.db.copy!(sql, data))) };
    const settlement = new Settlement(services.config, db, services.pools, h.app.app.log);
    try {
      // A turn a millisecond for 300 ms, as at 1,000 req/s: a round every 5 ms took ~5 turns, and PostgreSQL
      // spent ~250 µs of CPU per row on rounds that small against ~85 µs at 20 a round.
      const started = performance.now();
      let recorded = 0;
      while (performance.now() - started < 300) {
        settlement.record(ledgerEntry(member.accountId, { requestId: `mbr_steady${process.pid}x${Date.now()}x${recorded++}` }), null);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      const scheduled = starts.length;
      await settlement.flush();
      expect((await ledgerRows(h.database, member.accountId, recorded, 3000)).length).toBe(recorded);
      // The rounds the settlement scheduled itself (not the final flush): 20 ms apart. A start is seen here at
      // its COPY, a little after the round began (a pooled connection first, on a loaded machine up to a few
      // ms), so one gap may look shorter by that much; their median may not. Rounds every 5 ms gave 5–10.
      const gaps = starts.slice(1, scheduled).map((at, i) => at - starts[i]!);
      expect(gaps.length).toBeGreaterThan(2);
      const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)]!;
      expect(median).toBeGreaterThanOrEqual(19);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(12);
    } finally {
      await settlement.close();
    }
  });

  it('a request recorded just as a round ends is still written, with no later request to carry it', async () => {
    const { services } = h.app.app;
    // The second request is recorded k microtasks after the round's pool settlement resolves: for some k
    // that is after the round's last look at its queue and before it counts as ended.
    for (let k = 0; k < 8; k++) {
      const first = await reserve();
      const late = ledgerEntry(first.member.accountId, { requestId: `mbr_late${process.pid}x${Date.now()}x${k}`, costMicros: 0, reservedMicros: 0 });
      const store = Object.create(services.pools) as typeof services.pools;
      store.settle = async (items) => {
        const settled = await services.pools.settle(items);
        let hop: () => void = () => void settlement.record(late, null);
        for (let i = 0; i < k; i++) {
          const next = hop;
          hop = () => queueMicrotask(next);
        }
        hop();
        return settled;
      };
      const settlement = new Settlement(services.config, services.db, store, h.app.app.log);
      settlement.record(first.entry, first.ref);
      // No flush() and no further request: the settlement's own scheduling must write both rows.
      const rows = await ledgerRows(h.database, first.member.accountId, 2, 2000);
      expect(rows.map((row) => row.request_id).sort()).toEqual([first.entry.requestId, late.requestId].sort());
      await settlement.close();
    }
  });

  it('a turn whose instance died before its ledger row was written is billed by the sweeper at its exact cost', async () => {
    const { member, ref, entry, poolDay } = await reserve(1);
    const { services } = h.app.app;
    const redis = services.redis.redis!;
    // The instance dies during the round's ledger write: the write never completes and nothing is settled.
    const db = Object.create(services.db) as typeof services.db;
    db.copy = () => new Promise<void>(() => undefined);
    db.query = () => new Promise<void>(() => undefined);
    const settlement = new Settlement(services.config, db, services.pools, h.app.app.log);
    settlement.record(entry, ref);
    const deadline = Date.now() + 3000;
    while ((await redis.exists(`ckpt:${ref.requestId}`)) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await redis.exists(`ckpt:${ref.requestId}`), 'the final checkpoint is written without the round').toBe(1);
    expect(await ledgerRows(h.database, member.accountId, 0)).toHaveLength(0);
    expect(await poolDay()).toBe(RESERVED);

    const sweeper = new Sweeper(services.config, services.db, services.pools, services.windows, h.app.app.log);
    expect(await sweeper.sweep()).toBeGreaterThanOrEqual(1);
    const rows = await ledgerRows(h.database, member.accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ request_id: ref.requestId, status: 'ok', estimated: false, input_tokens: 1, output_tokens: 2 });
    expect(Number(rows[0]!.cost_micros)).toBe(COST);
    expect(await poolDay()).toBe(COST);
    expect(await redis.exists(`res:${ref.requestId}`)).toBe(0);
    expect(await redis.exists(`ckpt:${ref.requestId}`)).toBe(0);
  });

  it('a credit-paid turn whose instance died after its reply, before its row, is settled by the sweeper at its exact cost, once', async () => {
    const member = await h.member();
    const { services } = h.app.app;
    const credit = services.creditLedger;
    const START = 1_000_000;
    expect((await credit.append({ accountId: member.accountId, amountMicros: START, kind: 'adjustment', reference: null })).ok).toBe(true);
    await credit.setPayFromCredit(member.accountId, true);
    const requestId = `mbr_creditdied${process.pid}x${Date.now()}`;
    expect(await credit.reserveTurn(member.accountId, requestId, RESERVED, 'fast')).toBe(true);
    const entry = ledgerEntry(member.accountId, { requestId, inputTokens: 1, outputTokens: 2, costMicros: COST, reservedMicros: RESERVED, paidFromCredit: true });
    // The instance dies during the round's ledger write: no row, and the hold is not ended.
    const db = Object.create(services.db) as typeof services.db;
    db.copy = () => new Promise<void>(() => undefined);
    db.query = () => new Promise<void>(() => undefined);
    const settlement = new Settlement(services.config, db, services.pools, h.app.app.log, credit);
    settlement.record(entry, null, { requestId, payerId: member.accountId, reservedMicros: RESERVED });
    expect(await ledgerRows(h.database, member.accountId, 0)).toHaveLength(0);

    const balance = async () => Number((await h.database.query(`select balance_micros from credit_balance where account_id = $1`, [member.accountId])).rows[0]!.balance_micros);
    expect(await balance()).toBe(START - RESERVED);
    // Past the hold's TTL two sweepers race for it: one row, the hold ended once, at the turn's exact cost.
    const sweepers = [0, 1].map(() => new Sweeper(services.config, services.db, services.pools, services.windows, h.app.app.log, credit));
    const past = Date.now() + services.config.gateway.reservationTtlSeconds * 1000 + 60_000;
    await Promise.all(sweepers.map((sweeper) => sweeper.sweep(past)));
    await sweepers[0]!.sweep(past);
    const rows = await ledgerRows(h.database, member.accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ request_id: requestId, status: 'ok', estimated: false, input_tokens: 1, output_tokens: 2, paid_from_credit: true });
    expect(Number(rows[0]!.cost_micros)).toBe(COST);
    expect(await balance()).toBe(START - COST);
    const refunds = await h.database.query(`select amount_micros from credit_entry where account_id = $1 and kind = 'refund'`, [member.accountId]);
    expect(refunds.rows.map((row) => Number((row as { amount_micros: string }).amount_micros))).toEqual([RESERVED - COST]);
    expect(await services.redis.redis!.exists(`ckpt:${requestId}`), 'its final checkpoint is forgotten once settled').toBe(0);
  });

  it("a turn's final checkpoint is in the Redis socket's kernel buffer when record()'s promise resolves, and the turns of a tick share one write", async () => {
    const turns = [await reserve(), await reserve(), await reserve()];
    const { services } = h.app.app;
    const socket = (services.redis.redis as Redis).stream;
    // Under load: an auto-pipeline of other commands is waiting for its answer (the final checkpoint once
    // waited behind it, a round trip and two event-loop turns after the reply).
    const busy = Promise.all(Array.from({ length: 50 }, () => services.redis.redis!.ping()));
    const before = socket.bytesWritten;
    const calls: { requestId: string; final: boolean | undefined; costMicros: number }[][] = [];
    const store = Object.create(services.pools) as typeof services.pools;
    store.checkpoint = (items) => {
      calls.push(items.map(({ ref, entry }) => ({ requestId: ref.requestId, final: entry.final, costMicros: entry.costMicros })));
      return services.pools.checkpoint(items);
    };
    const settlement = new Settlement(services.config, services.db, store, h.app.app.log);
    const seen = await Promise.all(
      turns.map(async ({ ref, entry }) => {
        await settlement.record(entry, ref);
        // What a reply's last bytes would find: `bytesWritten` counts what is buffered too, and none is.
        return { written: socket.bytesWritten - before, buffered: socket.writableLength };
      }),
    );
    expect(calls, 'one checkpoint call for the tick').toEqual([turns.map(({ ref }) => ({ requestId: ref.requestId, final: true, costMicros: COST }))]);
    for (const { written, buffered } of seen) {
      expect(buffered).toBe(0);
      expect(written).toBeGreaterThan(turns.reduce((sum, { entry }) => sum + JSON.stringify(entry).length, 0));
    }
    await busy;
    await settlement.close();
  });

  it('a settled turn leaves no checkpoint behind: its final one reaches Redis before the settlement that removes it', async () => {
    const { member, ref, entry, poolDay } = await reserve();
    const { services } = h.app.app;
    const written: string[] = [];
    const store = Object.create(services.pools) as typeof services.pools;
    store.checkpoint = (items) => {
      written.push(...items.map((item) => item.ref.requestId));
      expect(items.every((item) => item.entry.final)).toBe(true);
      return services.pools.checkpoint(items);
    };
    const settlement = new Settlement(services.config, services.db, store, h.app.app.log);
    // Flushed at once: the round's ledger write is already under way when the checkpoint is sent.
    settlement.record(entry, ref);
    await settlement.flush();
    await settlement.close();
    expect(written).toEqual([ref.requestId]);
    const [row] = await ledgerRows(h.database, member.accountId);
    expect(row).toMatchObject({ status: 'ok', estimated: false });
    expect(await poolDay()).toBe(COST);
    expect(await services.redis.redis!.exists(`ckpt:${ref.requestId}`)).toBe(0);
  });
});

describe('database health', () => {
  it('an event loop blocked for 1.5 s while PostgreSQL answers does not close admission', async () => {
    const { services } = h.app.app;
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    // The probe pings every second with a 1 s deadline: the loop is blocked just after the first ping goes
    // out until well past its deadline, as answering thousands of subscriptions at once once did.
    let pings = 0;
    const db = Object.create(services.db) as typeof services.db;
    db.ping = (timeoutMs) => {
      const ping = services.db.ping(timeoutMs);
      if (++pings === 1) {
        setImmediate(() => {
          const until = performance.now() + 1500;
          while (performance.now() < until);
        });
      }
      return ping;
    };
    const settlement = new Settlement(services.config, db, services.pools, log);
    settlement.start();
    await vi.waitFor(() => expect(pings).toBeGreaterThanOrEqual(3), { timeout: 6000, interval: 50 });
    await new Promise((resolve) => setTimeout(resolve, 200)); // the third ping answers
    await settlement.close();
    expect(warnings.filter((line) => line.includes('database unreachable'))).toEqual([]);
    expect(settlement.databaseHealthy).toBe(true);
  });
});
