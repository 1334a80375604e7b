/**
 * Pools in Redis: one Lua script admits a request — GCRA rate limits, the concurrent-stream cap and the
 * reservation against day, week and month — atomically, in one round trip. Keys (all under the configured
 * prefix): `pool:<payer>:<class>:<windowKey>` (used micros, reservations included), `res:<requestId>`
 * (the reservation: `cost|payer|class|dayKey|weekKey|monthKey|stream|instance`), `res:index` (zset of
 * reservations by expiry, for the sweeper), `streams:<payer>` (zset of open streams by expiry),
 * `ckpt:<requestId>` (a running stream's last checkpoint: the ledger row as JSON), `res:inst:<instance>`
 * (the reservations an instance holds), `instances` (zset of instance heartbeats, by Redis's clock) and
 * `pools:epoch` (set once the pools were reconciled against the ledger: while it is missing — an empty
 * Redis, after a restart without persistence or a flush — nothing is admitted until an instance has raised
 * every pool to what the ledger billed, so a lost counter never hands its window out again).
 * `<requestId>` is always the turn id svc generated.
 */
import type { Redis } from 'ioredis';
import type { ModelClass } from '../config/config.ts';
import { modelClasses, poolWindows } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import { gcraLua, gcraParams } from '../modules/rate-limit/gcra.ts';
import type { LedgerEntry } from './ledger.ts';
import type { Admission, AdmissionRequest, ExpiredReservation, LedgerFloor, PoolStore, PoolUsage, ReservationRef } from './pool.store.ts';
import type { CurrentWindows } from './windows.ts';

/** Pool counters outlive their window by a week so the usage page can still show them. */
const POOL_KEY_SLACK_MS = 7 * 24 * 3600_000;
/** An instance that has not heartbeaten for this long is dead: the sweeper settles what it held. */
export const DEAD_AFTER_MS = 10_000;
/** A checkpoint outlives any reservation (its TTL is at most a day) so the sweeper still finds it. */
const CHECKPOINT_TTL_MS = 2 * 24 * 3600_000;

const admitScript = `${gcraLua}
local n = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[n + 8]) == 0 then return {4} end
local now = gcra_now()
local allowed, bind, remaining, reset, retry, tats = gcra_check(1, 2, n, now)
if allowed == 0 then return {1, bind, remaining, math.ceil(reset), math.ceil(retry)} end
local a = 2 + n * 3
local k = n + 1
local cap = tonumber(ARGV[a])
local ttl = tonumber(ARGV[a + 1])
local cost = tonumber(ARGV[a + 2])
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', now)
  if redis.call('ZCARD', KEYS[k]) >= cap then
    gcra_commit(1, n, now, tats)
    return {2, cap}
  end
end
for w = 1, 3 do
  local used = tonumber(redis.call('GET', KEYS[k + w]) or '0')
  local limit = tonumber(ARGV[a + 2 + w])
  if used + cost > limit then
    gcra_commit(1, n, now, tats)
    return {3, w, used, limit}
  end
end
gcra_commit(1, n, now, tats)
for w = 1, 3 do
  redis.call('INCRBY', KEYS[k + w], cost)
  redis.call('PEXPIREAT', KEYS[k + w], ARGV[a + 5 + w])
end
if cap > 0 then
  redis.call('ZADD', KEYS[k], now + ttl, ARGV[a + 9])
  redis.call('PEXPIRE', KEYS[k], ttl)
end
redis.call('SET', KEYS[k + 4], ARGV[a + 10], 'PX', ttl + 86400000)
redis.call('ZADD', KEYS[k + 5], now + ttl, ARGV[a + 9])
redis.call('SADD', KEYS[k + 6], ARGV[a + 9])
return {0, bind, remaining, math.ceil(reset)}
`;

/**
 * Settles a batch in one call. Per entry, KEYS: res, index, pool day/week/month, streams, checkpoint, the owner
 * instance's reservation set; ARGV: requestId,
 * actual cost, pool expiries (3). Returns per entry 1 when the reservation existed (pools move by
 * actual − reserved), 0 when it was already gone: whoever removed it accounted for it (the sweeper to the
 * ledger's cost; after a Redis loss, reconciliation raises the pools to the ledger), so nothing moves —
 * a request is never charged twice.
 */
const settleScript = `
local out = {}
for i = 0, #KEYS / 8 - 1 do
  local k, a = i * 8, i * 5
  local reserved = redis.call('GET', KEYS[k + 1])
  local existed = 0
  if reserved then
    existed = 1
    redis.call('DEL', KEYS[k + 1])
    redis.call('ZREM', KEYS[k + 2], ARGV[a + 1])
    local delta = tonumber(ARGV[a + 2]) - tonumber(string.match(reserved, '^(%d+)'))
    if delta ~= 0 then
      for w = 1, 3 do
        local v = redis.call('INCRBY', KEYS[k + 2 + w], delta)
        if v < 0 then redis.call('SET', KEYS[k + 2 + w], 0, 'KEEPTTL') end
        if redis.call('PTTL', KEYS[k + 2 + w]) < 0 then redis.call('PEXPIREAT', KEYS[k + 2 + w], ARGV[a + 2 + w]) end
      end
    end
  end
  redis.call('ZREM', KEYS[k + 6], ARGV[a + 1])
  redis.call('DEL', KEYS[k + 7])
  redis.call('SREM', KEYS[k + 8], ARGV[a + 1])
  out[i + 1] = existed
end
return out
`;
/** KEYS: pool day/week/month. ARGV: floors (3), expiries (3). Returns how many counters were raised. */
const raiseScript = `
local raised = 0
for w = 1, 3 do
  local floor = tonumber(ARGV[w])
  local current = tonumber(redis.call('GET', KEYS[w]) or '0')
  if current < floor then
    redis.call('SET', KEYS[w], floor, 'PXAT', ARGV[3 + w])
    raised = raised + 1
  end
end
return raised
`;

/**
 * KEYS: instances. ARGV: instance id. Records a heartbeat at Redis's own clock (instances' clocks may
 * differ). Returns 1 when the instance was not in the set (first beat, or Redis lost its data), else 0.
 */
const heartbeatScript = `
local t = redis.call('TIME')
return redis.call('ZADD', KEYS[1], t[1] * 1000 + math.floor(t[2] / 1000), ARGV[1])
`;
/** KEYS: instances. ARGV: how long without a heartbeat counts as dead (ms). Returns the dead instance ids. */
const deadInstancesScript = `
local t = redis.call('TIME')
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', t[1] * 1000 + math.floor(t[2] / 1000) - tonumber(ARGV[1]), 'LIMIT', 0, 100)
`;

type PoolRedis = Redis & {
  svcHeartbeat(numKeys: number, ...args: (string | number)[]): Promise<number>;
  svcDeadInstances(numKeys: number, ...args: (string | number)[]): Promise<string[]>;
  svcAdmit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  svcSettle(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  svcRaise(numKeys: number, ...args: (string | number)[]): Promise<number>;
};

export function poolKey(payerId: string, cls: ModelClass, windowKey: string): string {
  return `pool:${payerId}:${cls}:${windowKey}`;
}

/** Present while the pools are reconciled against the ledger (see the top of this file). */
const EPOCH = 'pools:epoch';

export class RedisPoolStore implements PoolStore {
  readonly #redis: PoolRedis;
  #reconcile: (() => Promise<unknown>) | null = null;
  #reconciling: Promise<void> | null = null;
  /** This instance: its reservations are listed in `res:inst:<id>`, its heartbeat in `instances`. */
  readonly #instanceId: string;

  constructor(redis: Redis, instanceId: string) {
    this.#instanceId = instanceId;
    this.#redis = redis as PoolRedis;
    this.#redis.defineCommand('svcHeartbeat', { lua: heartbeatScript });
    this.#redis.defineCommand('svcDeadInstances', { lua: deadInstancesScript });
    this.#redis.defineCommand('svcAdmit', { lua: admitScript });
    this.#redis.defineCommand('svcSettle', { lua: settleScript });
    this.#redis.defineCommand('svcRaise', { lua: raiseScript });
  }

  /** Called with the reconciliation to run when an admission finds the pools unreconciled (the sweeper's). */
  whenUnreconciled(reconcile: () => Promise<unknown>): void {
    this.#reconcile = reconcile;
  }

  #reconcileOnce(): Promise<void> {
    this.#reconciling ??= (async () => {
      try {
        if (this.#reconcile) await this.#reconcile();
        else await this.#redis.set(EPOCH, Date.now());
      } finally {
        this.#reconciling = null;
      }
    })();
    return this.#reconciling;
  }

  /** Raises each pool to at least what the ledger billed in its window, then marks the pools reconciled. */
  async raiseToLedger(floors: readonly LedgerFloor[], windows: CurrentWindows): Promise<number> {
    const expiries = poolWindows.map((window) => windows[window].resetsAt.getTime() + POOL_KEY_SLACK_MS);
    const results = await Promise.all(
      floors.map((floor) =>
        this.#redis.svcRaise(
          3,
          ...poolWindows.map((window) => poolKey(floor.payerId, floor.class, windows[window].key)),
          ...poolWindows.map((window) => floor.billed[window]),
          ...expiries,
        ),
      ),
    );
    await this.#redis.set(EPOCH, Date.now());
    return results.reduce((sum, raised) => sum + raised, 0);
  }

  async admit(request: AdmissionRequest): Promise<Admission> {
    const { payerId, windows, rateRules } = request;
    const n = rateRules.length;
    const args: (string | number)[] = [];
    for (const rule of rateRules) args.push(`rl:${rule.key}`);
    const day = poolKey(payerId, request.class, windows.day.key);
    const week = poolKey(payerId, request.class, windows.week.key);
    const month = poolKey(payerId, request.class, windows.month.key);
    args.push(`streams:${payerId}`, day, week, month, `res:${request.requestId}`, 'res:index', `res:inst:${this.#instanceId}`);
    args.push(n);
    for (const rule of rateRules) {
      const { emissionMs, toleranceMs } = gcraParams(rule);
      args.push(emissionMs, toleranceMs, 1);
    }
    const { limits } = request;
    args.push(
      request.streamCap,
      request.ttlMs,
      request.reserveMicros,
      limits.day,
      limits.week,
      limits.month,
      windows.day.resetsAt.getTime() + POOL_KEY_SLACK_MS,
      windows.week.resetsAt.getTime() + POOL_KEY_SLACK_MS,
      windows.month.resetsAt.getTime() + POOL_KEY_SLACK_MS,
      request.requestId,
      `${request.reserveMicros}|${payerId}|${request.class}|${windows.day.key}|${windows.week.key}|${windows.month.key}|${request.streamCap > 0 ? 1 : 0}|${this.#instanceId}`,
    );
    let result = await this.#redis.svcAdmit(n + 8, ...args.slice(0, n + 7), EPOCH, ...args.slice(n + 7));
    if (result[0] === 4) {
      // Redis has lost its data (or is new): reconcile the pools against the ledger, then try once more.
      await this.#reconcileOnce();
      result = await this.#redis.svcAdmit(n + 8, ...args.slice(0, n + 7), EPOCH, ...args.slice(n + 7));
      if (result[0] === 4) throw new Error('the pools are not reconciled against the ledger yet');
    }
    switch (result[0]) {
      case 0:
        return { ok: true, rate: { allowed: true, rule: rateRules[result[1]! - 1]!, remaining: result[2]!, resetMs: result[3]!, retryAfterMs: 0 } };
      case 1:
        return {
          ok: false,
          reason: 'rate_limited',
          rate: { allowed: false, rule: rateRules[result[1]! - 1]!, remaining: result[2]!, resetMs: result[3]!, retryAfterMs: result[4]! },
        };
      case 2:
        return { ok: false, reason: 'stream_cap', cap: result[1]! };
      default:
        return { ok: false, reason: 'quota', window: poolWindows[result[1]! - 1]!, usedMicros: result[2]!, limitMicros: result[3]! };
    }
  }

  async settle(items: readonly { ref: ReservationRef; costMicros: Micros }[]): Promise<boolean[]> {
    if (items.length === 0) return [];
    const keys: string[] = [];
    const args: (string | number)[] = [];
    for (const { ref, costMicros } of items) this.#settleArgs(keys, args, ref.requestId, ref.payerId, ref.class, ref.windows, costMicros, this.#instanceId);
    const existed = await this.#redis.svcSettle(keys.length, ...keys, ...args);
    return existed.map((flag) => flag === 1);
  }

  async expired(now: number, limit: number): Promise<ExpiredReservation[]> {
    const ids = await this.#redis.zrangebyscore('res:index', '-inf', now, 'LIMIT', 0, limit);
    return this.#load(ids, (id) => this.#redis.zrem('res:index', id));
  }

  async heartbeat(): Promise<boolean> {
    return (await this.#redis.svcHeartbeat(1, 'instances', this.#instanceId)) === 1;
  }

  async orphaned(limit: number): Promise<ExpiredReservation[]> {
    const dead = (await this.#redis.svcDeadInstances(1, 'instances', DEAD_AFTER_MS)).filter((id) => id !== this.#instanceId);
    for (const instance of dead) {
      const set = `res:inst:${instance}`;
      const ids = await this.#redis.srandmember(set, limit);
      if (ids.length === 0) {
        // Everything it held is settled: forget the instance.
        await this.#redis.multi().zrem('instances', instance).del(set).exec();
        continue;
      }
      return this.#load(ids, (id) => this.#redis.srem(set, id));
    }
    return [];
  }

  async leave(): Promise<void> {
    await this.#redis.zrem('instances', this.#instanceId);
  }

  /** Reservation records and checkpoints of these turns; ids whose record is gone are dropped from their index. */
  async #load(ids: string[], drop: (id: string) => Promise<unknown>): Promise<ExpiredReservation[]> {
    if (ids.length === 0) return [];
    const [records, checkpoints] = await Promise.all([this.#redis.mget(ids.map((id) => `res:${id}`)), this.#redis.mget(ids.map((id) => `ckpt:${id}`))]);
    const out: ExpiredReservation[] = [];
    ids.forEach((requestId, i) => {
      const record = records[i];
      if (!record) {
        drop(requestId).catch(() => undefined);
        return;
      }
      const [cost, payerId, cls, , , , , instanceId] = record.split('|');
      const checkpoint = checkpoints[i] ? (JSON.parse(checkpoints[i]!) as LedgerEntry) : null;
      out.push({ requestId, payerId: payerId!, class: cls as ModelClass, reservedMicros: Number(cost), instanceId: instanceId ?? null, checkpoint });
    });
    return out;
  }

  async checkpoint(items: readonly { ref: ReservationRef; entry: LedgerEntry }[]): Promise<void> {
    if (items.length === 0) return;
    const pipeline = this.#redis.pipeline();
    for (const { ref, entry } of items) pipeline.set(`ckpt:${ref.requestId}`, JSON.stringify(entry), 'PX', CHECKPOINT_TTL_MS);
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (failed) throw failed[0];
  }

  async settleExpired(requestId: string, costMicros: Micros): Promise<boolean> {
    const record = await this.#redis.get(`res:${requestId}`);
    if (!record) return false;
    const [, payerId, cls, day, week, month, , owner] = record.split('|') as [string, string, ModelClass, string, string, string, string, string | undefined];
    const windows = {
      day: { key: day, resetsAt: new Date(0) },
      week: { key: week, resetsAt: new Date(0) },
      month: { key: month, resetsAt: new Date(0) },
    } as unknown as CurrentWindows;
    const keys: string[] = [];
    const args: (string | number)[] = [];
    this.#settleArgs(keys, args, requestId, payerId, cls, windows, costMicros, owner ?? this.#instanceId);
    const [existed] = await this.#redis.svcSettle(keys.length, ...keys, ...args);
    return existed === 1;
  }

  async read(payerId: string, windows: CurrentWindows): Promise<PoolUsage[]> {
    const slots = modelClasses.flatMap((cls) => poolWindows.map((window) => ({ cls, window })));
    const values = await this.#redis.mget(slots.map(({ cls, window }) => poolKey(payerId, cls, windows[window].key)));
    return slots.map(({ cls, window }, i) => ({ class: cls, window, usedMicros: Math.max(0, Number(values[i] ?? 0)) }));
  }

  #settleArgs(
    keys: string[],
    args: (string | number)[],
    requestId: string,
    payerId: string,
    cls: ModelClass,
    windows: CurrentWindows,
    costMicros: Micros,
    owner: string,
  ): void {
    keys.push(
      `res:${requestId}`,
      'res:index',
      poolKey(payerId, cls, windows.day.key),
      poolKey(payerId, cls, windows.week.key),
      poolKey(payerId, cls, windows.month.key),
      `streams:${payerId}`,
      `ckpt:${requestId}`,
      `res:inst:${owner}`,
    );
    args.push(
      requestId,
      costMicros,
      windows.day.resetsAt.getTime() + POOL_KEY_SLACK_MS,
      windows.week.resetsAt.getTime() + POOL_KEY_SLACK_MS,
      windows.month.resetsAt.getTime() + POOL_KEY_SLACK_MS,
    );
  }
}
