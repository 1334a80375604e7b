/**
 * Pools in Redis: one Lua script admits a request — GCRA rate limits, the concurrent-stream cap and the
 * reservation against day, week and month — atomically, in one round trip. Keys (all under the configured
 * prefix): `pool:<payer>:<class>:<windowKey>` (used micros, reservations included), `res:<requestId>`
 * (the reservation: `cost|payer|class|dayKey|weekKey|monthKey|stream|instance`), `res:index` (zset of
 * reservations by expiry, for the sweeper), `streams:<payer>` (zset of open streams by expiry),
 * `ckpt:<requestId>` (a running stream's last checkpoint, or a finished turn's row until it is settled: the
 * ledger row as JSON), `res:inst:<instance>`
 * (the reservations an instance holds), `instances` (zset of instance heartbeats, by Redis's clock) and
 * `pools:epoch` (one per shard on a cluster; set once the pools were reconciled against the ledger: while
 * it is missing — an empty Redis, after a restart without persistence or a flush — nothing is admitted until
 * an instance has raised every pool to what the ledger billed, so a lost counter never hands its window
 * out again).
 * `<requestId>` is always the turn id svc generated. A key with spend caps (issue 51) has `kcap:<key>:<dayKey>`
 * and `kcap:<key>:<monthKey>` (its used micros, reservations included), checked and bumped by the same
 * admission script, and its reservation record ends with `|k:<key>` so settlement moves them with the pools.
 * A turn of such a key paid from prepaid credit (its pools refused it) holds its worst case on those two
 * counters alone, checked and bumped by one script (`kcaph:<requestId>`: `reserved|key|dayKey|monthKey`),
 * until its settlement or the sweeper moves them to its cost.
 *
 * On a Redis Cluster every key a script touches must hash to one slot. Each payer belongs to one of
 * `CLUSTER_SHARDS` shards (by a hash of its id), and every key above except `instances` ends with the
 * shard's hash tag `{m<n>}`: the payer's pools, streams, reservations, checkpoints and payer-scoped rate
 * limits, and the shard's own `res:index{m<n>}` and `res:inst:<instance>{m<n>}` — so admission and
 * settlement stay one atomic script, and the sweeper reads each shard's index (one command per shard).
 * On a single Redis the tag is empty: the keys are exactly the names above.
 */
import type { Redis } from 'ioredis';
import type { RedisClient } from '../infra/redis.ts';
import { setNow } from '../infra/redis-written.ts';
import { LuaScript, type ScriptArgs } from '../infra/redis-script.ts';
import type { ModelClass } from '../config/config.ts';
import { modelClasses, poolWindows } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import { hitEachRule, refundRules, withGcraScripts, type GcraRedis } from '../rate-limit/gcra.cluster.ts';
import { gcraLua, gcraParams, type RateDecision, type RateRule } from '../rate-limit/gcra.ts';
import type { LedgerEntry } from './ledger.ts';
import { keyCapWindows, LEASE_PREFIX, type Admission, type AdmissionRequest, type CheckpointRef, type ExpiredReservation, type KeyBudgetRefusal, type KeyCapFloor, type LedgerFloor, type PoolStore, type PoolUsage, type ReservationRef } from './pool.store.ts';
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
local capped = #KEYS > n + 8
if capped then
  for w = 1, 2 do
    local limit = tonumber(ARGV[a + 10 + w])
    if limit >= 0 then
      local used = tonumber(redis.call('GET', KEYS[n + 8 + w]) or '0')
      if used + cost > limit then
        gcra_commit(1, n, now, tats)
        return {5, w, used, limit}
      end
    end
  end
end
gcra_commit(1, n, now, tats)
for w = 1, 3 do
  redis.call('INCRBY', KEYS[k + w], cost)
  redis.call('PEXPIREAT', KEYS[k + w], ARGV[a + 5 + w])
end
if capped then
  for w = 1, 2 do
    redis.call('INCRBY', KEYS[n + 8 + w], cost)
    redis.call('PEXPIREAT', KEYS[n + 8 + w], ARGV[a + 12 + w])
  end
end
if cap > 0 then
  redis.call('ZADD', KEYS[k], now + ttl, ARGV[a + 9])
  if redis.call('PTTL', KEYS[k]) < ttl then redis.call('PEXPIRE', KEYS[k], ttl) end
end
redis.call('SET', KEYS[k + 4], ARGV[a + 10], 'PX', ttl + 86400000)
redis.call('ZADD', KEYS[k + 5], now + ttl, ARGV[a + 9])
redis.call('SADD', KEYS[k + 6], ARGV[a + 9])
return {0, bind, remaining, math.ceil(reset)}
`;

/**
 * Settles a batch in one call. Per entry, KEYS: res, index, pool day/week/month, streams, checkpoint, the owner
 * instance's reservation set, the capped key's day/month counters (moved only when the record names a key,
 * `|k:<id>`; placeholders otherwise); ARGV: requestId,
 * actual cost, pool expiries (3). Returns per entry 1 when the reservation existed (pools move by
 * actual − reserved), 0 when it was already gone: whoever removed it accounted for it (the sweeper to the
 * ledger's cost; after a Redis loss, reconciliation raises the pools to the ledger), so nothing moves —
 * a request is never charged twice.
 */
const settleScript = `
local out = {}
for i = 0, #KEYS / 10 - 1 do
  local k, a = i * 10, i * 5
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
      if string.find(reserved, '|k:', 1, true) then
        for w = 9, 10 do
          local v = redis.call('INCRBY', KEYS[k + w], delta)
          if v < 0 then redis.call('SET', KEYS[k + w], 0, 'KEEPTTL') end
          if redis.call('PTTL', KEYS[k + w]) < 0 then redis.call('PEXPIRE', KEYS[k + w], 3456000000) end
        end
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
/**
 * Gives back part of a lease before it settles (a retired lease's unused budget, while its last requests
 * are still running): the record's reserved amount and the pools both drop by it, so the final settlement
 * (cost − reserved) and the sweeper (ledger − reserved) stay exact. KEYS: lease record, pool day/week/month.
 * ARGV: micros. Returns what was given back (0 when the lease is gone).
 */
const releaseScript = `
local record = redis.call('GET', KEYS[1])
if not record then return 0 end
local digits = string.match(record, '^(%d+)')
local reserved = tonumber(digits)
local give = tonumber(ARGV[1])
if give > reserved then give = reserved end
if give <= 0 then return 0 end
redis.call('SET', KEYS[1], (reserved - give) .. string.sub(record, #digits + 1), 'KEEPTTL')
for w = 2, 4 do
  local v = redis.call('DECRBY', KEYS[w], give)
  if v < 0 then redis.call('SET', KEYS[w], 0, 'KEEPTTL') end
end
return give
`;
/**
 * Takes an admission lease (pool.leasing-store.ts) of whole worst cases (`reserve` micros each): up to
 * `want` of them, no more than every rate rule has requests left right now, and no more than a quarter of
 * what is left in the tightest of the day, week and month pools — so leases shrink as a pool fills, and
 * once fewer than two fit (under eight worst cases left) there is none: near its end a pool is admitted
 * one request at a time by the exact script above. The lease is recorded like a reservation (same record shape, index and instance
 * set), so settling it to what it consumed returns the rest, and the sweeper finds it if its owner dies.
 * No lease while the pools are unreconciled (the epoch is missing): the exact script reconciles first.
 * A lease for streams (cap > 0) also takes as many of the payer's concurrent-stream slots, no more than a
 * quarter of those free: members `<lease id>:1…<requests>` of the payer's `streams:` set, one per stream it
 * admits, so the cap holds across instances exactly as it does for the exact script's own members.
 * Its record's stream field is the number of slots it took (0 for a lease of non-streaming requests), so
 * the sweeper frees them when it settles a dead instance's lease.
 * KEYS: rule keys (n), pool day/week/month, lease record, res:index, res:inst, epoch, streams. ARGV: n,
 * (emission, tolerance) per rule, want, stream cap (0: not a stream lease), limits (3), expiries (3), lease
 * id, record middle (up to the stream field), ttl, reserve, record end (after it).
 * Returns {0} (no lease) or {1, requests, micros, tightest rule (1-based), its requests left after the lease}.
 */
const leaseScript = `
local n = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[n + 7]) == 0 then return {0} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local a = 2 + n * 2
local tokens = tonumber(ARGV[a])
local tats = {}
for i = 1, n do
  local emission = tonumber(ARGV[i * 2])
  local tolerance = tonumber(ARGV[i * 2 + 1])
  local tat = tonumber(redis.call('GET', KEYS[i]) or '0')
  if tat < now then tat = now end
  local available = math.floor((now + tolerance - tat) / emission)
  if available < tokens then tokens = available end
  tats[i] = tat
end
local reserve = tonumber(ARGV[a + 11])
local room = math.huge
for w = 1, 3 do
  local left = tonumber(ARGV[a + 1 + w]) - tonumber(redis.call('GET', KEYS[n + w]) or '0')
  if left < room then room = left end
end
local fit = math.floor(math.floor(room / 4) / reserve)
if fit < tokens then tokens = fit end
local cap = tonumber(ARGV[a + 1])
if cap > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[n + 8], '-inf', now)
  local slots = math.floor((cap - redis.call('ZCARD', KEYS[n + 8])) / 4)
  if slots < tokens then tokens = slots end
end
if tokens < 2 then return {0} end
local chunk = tokens * reserve
local tightest, left = 0, math.huge
for i = 1, n do
  local after = math.floor((now + tonumber(ARGV[i * 2 + 1]) - tats[i]) / tonumber(ARGV[i * 2])) - tokens
  if after < left then tightest, left = i, after end
end
if tightest == 0 then left = 0 end
for i = 1, n do
  local new_tat = tats[i] + tonumber(ARGV[i * 2]) * tokens
  local ttl = math.ceil(new_tat - now)
  if ttl < 1 then ttl = 1 end
  redis.call('SET', KEYS[i], new_tat, 'PX', ttl)
end
for w = 1, 3 do
  redis.call('INCRBY', KEYS[n + w], chunk)
  redis.call('PEXPIREAT', KEYS[n + w], ARGV[a + 4 + w])
end
local ttl = tonumber(ARGV[a + 10])
local slots = 0
if cap > 0 then slots = tokens end
redis.call('SET', KEYS[n + 4], chunk .. ARGV[a + 9] .. slots .. ARGV[a + 12], 'PX', ttl + 86400000)
redis.call('ZADD', KEYS[n + 5], now + ttl, ARGV[a + 8])
redis.call('SADD', KEYS[n + 6], ARGV[a + 8])
if cap > 0 then
  for i = 1, tokens do redis.call('ZADD', KEYS[n + 8], now + ttl, ARGV[a + 8] .. ':' .. i) end
  if redis.call('PTTL', KEYS[n + 8]) < ttl then redis.call('PEXPIRE', KEYS[n + 8], ttl) end
end
return {1, tokens, chunk, tightest, left}
`;

/**
 * A credit-paid turn's hold on its key's caps (no pool moves; the credit itself is held in the database).
 * KEYS: kcap day, kcap month, hold record, epoch. ARGV: reserve, day cap, month cap (-1 = none), their
 * expiries, record, record ttl. Returns {0} (held), {4} (unreconciled) or {5, window, used, limit}.
 */
const capHoldScript = `
if redis.call('EXISTS', KEYS[4]) == 0 then return {4} end
local cost = tonumber(ARGV[1])
for w = 1, 2 do
  local limit = tonumber(ARGV[1 + w])
  if limit >= 0 then
    local used = tonumber(redis.call('GET', KEYS[w]) or '0')
    if used + cost > limit then return {5, w, used, limit} end
  end
end
for w = 1, 2 do
  redis.call('INCRBY', KEYS[w], cost)
  redis.call('PEXPIREAT', KEYS[w], ARGV[3 + w])
end
redis.call('SET', KEYS[3], ARGV[6], 'PX', ARGV[7])
return {0}
`;
/**
 * Ends a `capHoldScript` hold, moving the key's counters by cost − reserved. KEYS: hold record, kcap day,
 * kcap month (the record's). ARGV: cost. Returns 1 when the hold existed, else 0 (nothing moves).
 */
const capReleaseScript = `
local record = redis.call('GET', KEYS[1])
if not record then return 0 end
redis.call('DEL', KEYS[1])
local delta = tonumber(ARGV[1]) - tonumber(string.match(record, '^(%d+)'))
if delta ~= 0 then
  for w = 2, 3 do
    local v = redis.call('INCRBY', KEYS[w], delta)
    if v < 0 then redis.call('SET', KEYS[w], 0, 'KEEPTTL') end
    if redis.call('PTTL', KEYS[w]) < 0 then redis.call('PEXPIRE', KEYS[w], 3456000000) end
  end
end
return 1
`;

/**
 * A round of stream checkpoints in one call (one command, where a SET each cost three times the CPU).
 * KEYS: the checkpoint keys (n), then lease lists (`lckpt:<lease>`) to add a stream to. ARGV: TTL, n, the n
 * rows as JSON, then one stream id per lease list.
 */
const checkpointScript = `
local ttl, n = ARGV[1], tonumber(ARGV[2])
for i = 1, n do redis.call('SET', KEYS[i], ARGV[i + 2], 'PX', ttl) end
for j = n + 1, #KEYS do
  redis.call('SADD', KEYS[j], ARGV[j + 2])
  redis.call('PEXPIRE', KEYS[j], ttl)
end
return n
`;
/** Checkpoints a script call writes at most, so one call never holds Redis for long. */
const CHECKPOINT_BATCH = 500;

/**
 * Called with its request written straight into one buffer (infra/redis-script.ts): through `defineCommand`,
 * where ioredis copies and prefixes the arguments and builds the request from strings, a turn's final
 * checkpoint under a lease took 70 k instructions rather than 59 k.
 */
const checkpointCall = new LuaScript(checkpointScript);

/** One `checkpointScript` call: a shard's rows (`ids[i]`'s as `rows[i]`), and the streams to list under their leases. */
interface CheckpointCall {
  tag: string;
  ids: string[];
  rows: string[];
  listed: readonly { leaseId: string; requestId: string }[];
}

/** `checkpointScript`'s keys and arguments. */
function writeCheckpointArgs(args: ScriptArgs, { tag, ids, rows, listed }: CheckpointCall): void {
  for (const id of ids) args.key().text('ckpt:').text(id).text(tag).end();
  for (const { leaseId } of listed) args.key().text('lckpt:').text(leaseId).end();
  args.arg().int(CHECKPOINT_TTL_MS).end().arg().int(ids.length).end();
  for (const row of rows) args.arg().text(row).end();
  for (const { requestId } of listed) args.arg().text(requestId).end();
}

/**
 * KEYS: counters (a pool's day/week/month, or a capped key's day/month). ARGV: their floors, then their
 * expiries. Returns how many counters were raised.
 */
const raiseScript = `
local raised = 0
for w = 1, #KEYS do
  local floor = tonumber(ARGV[w])
  local current = tonumber(redis.call('GET', KEYS[w]) or '0')
  if current < floor then
    redis.call('SET', KEYS[w], floor, 'PXAT', ARGV[#KEYS + w])
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

/** Shards of payers on a Redis Cluster: one slot each, spread over the masters (256 → ~85 a master of 3). */
export const CLUSTER_SHARDS = 256;

/** The hash tag of a payer's shard: `{m<n>}` on a cluster, '' on a single Redis. */
export function shardTag(cluster: boolean, payerId: string): string {
  if (!cluster) return '';
  // FNV-1a: stable across processes and versions (the tag is part of stored keys).
  let hash = 0x811c9dc5;
  for (let i = 0; i < payerId.length; i++) hash = Math.imul(hash ^ payerId.charCodeAt(i), 0x01000193);
  return `{m${(hash >>> 0) % CLUSTER_SHARDS}}`;
}

type PoolRedis = GcraRedis & {
  svcHeartbeat(numKeys: number, ...args: (string | number)[]): Promise<number>;
  svcDeadInstances(numKeys: number, ...args: (string | number)[]): Promise<string[]>;
  svcSettle(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  svcRaise(numKeys: number, ...args: (string | number)[]): Promise<number>;
  svcLease(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  svcRelease(numKeys: number, ...args: (string | number)[]): Promise<number>;
  svcCapHold(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  svcCapRelease(numKeys: number, ...args: (string | number)[]): Promise<number>;
};

/** A pool counter's key; `tag` is the payer's `shardTag` ('' on a single Redis). */
export function poolKey(payerId: string, cls: ModelClass, windowKey: string, tag = ''): string {
  return `pool:${payerId}:${cls}:${windowKey}${tag}`;
}

/** A capped key's spend counter in one window (`kcap:<key>:<windowKey>`); `tag` is its payer's `shardTag`. */
export function keyCapKey(keyId: string, windowKey: string, tag = ''): string {
  return `kcap:${keyId}:${windowKey}${tag}`;
}

/** `poolKey` as a script key. */
function writePoolKey(args: ScriptArgs, payerId: string, cls: ModelClass, windowKey: string, tag: string): void {
  args.key().text('pool:').text(payerId).text(':').text(cls).text(':').text(windowKey).text(tag).end();
}

/** The admission script, called with its request written straight into one buffer (infra/redis-script.ts). */
const admitCall = new LuaScript(admitScript);

/** Present while the pools are reconciled against the ledger (see the top of this file). */
const EPOCH = 'pools:epoch';

export class RedisPoolStore implements PoolStore {
  readonly #redis: PoolRedis;
  #reconcile: (() => Promise<unknown>) | null = null;
  #reconciling: Promise<void> | null = null;
  /** This instance: its reservations are listed in `res:inst:<id>`, its heartbeat in `instances`. */
  readonly #instanceId: string;
  readonly #cluster: boolean;
  /** Every shard's tag: [''] on a single Redis. */
  readonly #shards: string[];

  constructor(redis: RedisClient, instanceId: string) {
    this.#instanceId = instanceId;
    this.#cluster = redis.isCluster;
    this.#shards = this.#cluster ? Array.from({ length: CLUSTER_SHARDS }, (_, n) => `{m${n}}`) : [''];
    this.#redis = withGcraScripts(redis) as PoolRedis;
    this.#redis.defineCommand('svcHeartbeat', { lua: heartbeatScript });
    this.#redis.defineCommand('svcDeadInstances', { lua: deadInstancesScript });
    this.#redis.defineCommand('svcSettle', { lua: settleScript });
    this.#redis.defineCommand('svcRaise', { lua: raiseScript });
    this.#redis.defineCommand('svcLease', { lua: leaseScript });
    this.#redis.defineCommand('svcRelease', { lua: releaseScript });
    this.#redis.defineCommand('svcCapHold', { lua: capHoldScript });
    this.#redis.defineCommand('svcCapRelease', { lua: capReleaseScript });
  }

  /** Called with the reconciliation to run when an admission finds the pools unreconciled (the sweeper's). */
  whenUnreconciled(reconcile: () => Promise<unknown>): void {
    this.#reconcile = reconcile;
  }

  #reconcileOnce(): Promise<void> {
    this.#reconciling ??= (async () => {
      try {
        if (this.#reconcile) await this.#reconcile();
        else await this.#markReconciled();
      } finally {
        this.#reconciling = null;
      }
    })();
    return this.#reconciling;
  }

  /** Sets the epoch: on a cluster one per shard (each in its shard's slot, so a node that lost its data is seen). */
  async #markReconciled(): Promise<void> {
    const now = Date.now();
    await Promise.all(this.#shards.map((tag) => this.#redis.set(`${EPOCH}${tag}`, now)));
  }

  /**
   * Raises each pool, and each capped key's day and month counters, to at least what the ledger billed in
   * its window, then marks the pools reconciled: admission (which waits for the mark) never sees a lost
   * counter, so neither a pool nor a key cap hands its window out again.
   */
  async raiseToLedger(floors: readonly LedgerFloor[], windows: CurrentWindows, keyFloors: readonly KeyCapFloor[] = []): Promise<number> {
    const expiries = poolWindows.map((window) => windows[window].resetsAt.getTime() + POOL_KEY_SLACK_MS);
    const keyExpiries = keyCapWindows.map((window) => windows[window].resetsAt.getTime() + POOL_KEY_SLACK_MS);
    const results = await Promise.all([
      ...floors.map((floor) =>
        this.#redis.svcRaise(
          3,
          ...poolWindows.map((window) => poolKey(floor.payerId, floor.class, windows[window].key, this.#tag(floor.payerId))),
          ...poolWindows.map((window) => floor.billed[window]),
          ...expiries,
        ),
      ),
      ...keyFloors.map((floor) =>
        this.#redis.svcRaise(
          2,
          ...keyCapWindows.map((window) => keyCapKey(floor.keyId, windows[window].key, this.#tag(floor.payerId))),
          ...keyCapWindows.map((window) => floor.billed[window]),
          ...keyExpiries,
        ),
      ),
    ]);
    await this.#markReconciled();
    return results.reduce((sum, raised) => sum + raised, 0);
  }

  async admit(request: AdmissionRequest): Promise<Admission> {
    const { payerId } = request;
    const tag = this.#tag(payerId);
    if (!this.#cluster) return this.#admit(request, request.rateRules, tag, null);
    // On a cluster the rules outside the payer's slot (per IP) are checked first, on their own slots; the
    // script then checks the payer's own rules and reserves. Refused there by a rate limit: those are given back.
    const own = request.rateRules.filter((rule) => rule.scope === 'payer');
    const other = request.rateRules.filter((rule) => rule.scope !== 'payer');
    if (other.length === 0) return this.#admit(request, own, tag, null);
    const outside = await hitEachRule(this.#redis, other, 1, (rule) => `rl:${rule.key}`);
    if (!outside.allowed) return { ok: false, reason: 'rate_limited', rate: outside };
    let admission: Admission;
    try {
      admission = await this.#admit(request, own, tag, outside);
    } catch (error) {
      await refundRules(this.#redis, other, 1, (rule) => `rl:${rule.key}`);
      throw error;
    }
    if (!admission.ok && admission.reason === 'rate_limited') await refundRules(this.#redis, other, 1, (rule) => `rl:${rule.key}`);
    return admission;
  }

  /**
   * Takes an admission lease of up to `wantRequests` worst cases (`reserveMicros` each) and as many requests
   * of every rate rule, for this payer, class and windows (pool.leasing-store.ts); null when fewer than two
   * fit (the pools are near their end, or a rule has nothing left). Only on a single Redis (the rules' keys may live on other slots of a cluster).
   */
  async takeLease(
    leaseId: string,
    request: Pick<AdmissionRequest, 'payerId' | 'class' | 'windows' | 'limits' | 'rateRules' | 'streamCap'>,
    wantRequests: number,
    reserveMicros: Micros,
    ttlMs: number,
  ): Promise<{ requests: number; micros: Micros; ruleIndex: number; ruleLeft: number } | null> {
    if (this.#cluster) return null;
    const { payerId, windows, rateRules, limits } = request;
    const keys = [
      ...rateRules.map((rule) => `rl:${rule.key}`),
      ...poolWindows.map((window) => poolKey(payerId, request.class, windows[window].key)),
      `res:${leaseId}`,
      'res:index',
      `res:inst:${this.#instanceId}`,
      EPOCH,
      `streams:${payerId}`,
    ];
    const args: (string | number)[] = [rateRules.length];
    for (const rule of rateRules) {
      const { emissionMs, toleranceMs } = gcraParams(rule);
      args.push(emissionMs, toleranceMs);
    }
    args.push(
      wantRequests,
      request.streamCap,
      limits.day,
      limits.week,
      limits.month,
      ...poolWindows.map((window) => windows[window].resetsAt.getTime() + POOL_KEY_SLACK_MS),
      leaseId,
      `|${payerId}|${request.class}|${windows.day.key}|${windows.week.key}|${windows.month.key}|`,
      ttlMs,
      reserveMicros,
      `|${this.#instanceId}`,
    );
    const result = await this.#redis.svcLease(keys.length, ...keys, ...args);
    return result[0] === 1 ? { requests: result[1]!, micros: result[2]!, ruleIndex: Math.max(0, result[3]! - 1), ruleLeft: result[4]! } : null;
  }

  /** Connected to Redis right now (admission under a lease must not outlive it: fail closed). */
  get connected(): boolean {
    return this.#redis.status === 'ready';
  }

  /** Gives back `micros` of a lease that is still recorded (its unused budget); what was given back. */
  releaseLeased(ref: ReservationRef, micros: Micros): Promise<number> {
    const { payerId, windows } = ref;
    const tag = this.#tag(payerId);
    const pools = poolWindows.map((window) => poolKey(payerId, ref.class, windows[window].key, tag));
    return this.#redis.svcRelease(4, `res:${ref.requestId}${tag}`, ...pools, micros);
  }

  /** Frees a stream lease's slots `from`…`to` (its members of the payer's `streams:` set). */
  async releaseSlots(ref: Pick<ReservationRef, 'requestId' | 'payerId'>, from: number, to: number): Promise<void> {
    if (to < from) return;
    const members = Array.from({ length: to - from + 1 }, (_, i) => `${ref.requestId}:${from + i}`);
    await this.#redis.zrem(`streams:${ref.payerId}${this.#tag(ref.payerId)}`, ...members);
  }

  /** The last checkpoints of the streams admitted under a lease (for the sweeper, when its instance died). */
  async leaseCheckpoints(leaseId: string): Promise<LedgerEntry[]> {
    const ids = await this.#redis.smembers(`lckpt:${leaseId}`);
    if (ids.length === 0) return [];
    const entries = await this.#redis.mget(ids.map((id) => `ckpt:${id}`));
    return entries.flatMap((entry) => (entry ? [JSON.parse(entry) as LedgerEntry] : []));
  }

  /** Forgets a returned lease's checkpoints (its streams' ledger rows are written). */
  async dropLeaseCheckpoints(leaseId: string, requestIds: readonly string[]): Promise<void> {
    await this.#redis.del(`lckpt:${leaseId}`, ...requestIds.map((id) => `ckpt:${id}`));
  }

  /** Gives back rate-limit requests a lease took and did not use. */
  async refundRequests(rules: readonly RateRule[], requests: number): Promise<void> {
    if (requests > 0) await refundRules(this.#redis, rules, requests, (rule) => `rl:${rule.key}`);
  }

  /** The admission script with these rules (all in the payer's slot on a cluster); `outside`: the other rules' decision. */
  async #admit(request: AdmissionRequest, rateRules: readonly RateRule[], tag: string, outside: RateDecision | null): Promise<Admission> {
    const n = rateRules.length;
    const write = (args: ScriptArgs) => this.#admitArgs(args, request, rateRules, tag);
    let result = await admitCall.call<number[]>(this.#redis, tag, write);
    if (result[0] === 4) {
      // Redis has lost its data (or is new): reconcile the pools against the ledger, then try once more.
      await this.#reconcileOnce();
      result = await admitCall.call<number[]>(this.#redis, tag, write);
      if (result[0] === 4) throw new Error('the pools are not reconciled against the ledger yet');
    }
    switch (result[0]) {
      case 0: {
        const rate: RateDecision = n === 0 ? outside! : { allowed: true, rule: rateRules[result[1]! - 1]!, remaining: result[2]!, resetMs: result[3]!, retryAfterMs: 0 };
        return { ok: true, rate: outside && outside.remaining < rate.remaining ? outside : rate };
      }
      case 1:
        return {
          ok: false,
          reason: 'rate_limited',
          rate: { allowed: false, rule: rateRules[result[1]! - 1]!, remaining: result[2]!, resetMs: result[3]!, retryAfterMs: result[4]! },
        };
      case 2:
        return { ok: false, reason: 'stream_cap', cap: result[1]! };
      case 5:
        return { ok: false, reason: 'key_budget', window: keyCapWindows[result[1]! - 1]!, usedMicros: result[2]!, limitMicros: result[3]! };
      default:
        return { ok: false, reason: 'quota', window: poolWindows[result[1]! - 1]!, usedMicros: result[2]!, limitMicros: result[3]! };
    }
  }

  /** The admission script's keys and arguments (see `admitScript`), written without building their strings. */
  #admitArgs(args: ScriptArgs, request: AdmissionRequest, rateRules: readonly RateRule[], tag: string): void {
    const { payerId, windows, limits } = request;
    for (const rule of rateRules) {
      args.key().text('rl:').text(rule.key);
      if (rule.scope === 'payer') args.text(tag);
      args.end();
    }
    args.key().text('streams:').text(payerId).text(tag).end();
    for (const window of poolWindows) writePoolKey(args, payerId, request.class, windows[window].key, tag);
    args.key().text('res:').text(request.requestId).text(tag).end();
    args.key().text('res:index').text(tag).end();
    args.key().text('res:inst:').text(this.#instanceId).text(tag).end();
    args.key().text(EPOCH).text(tag).end();
    const cap = request.keyCap;
    if (cap) for (const window of keyCapWindows) args.key().text('kcap:').text(cap.keyId).text(':').text(windows[window].key).text(tag).end();
    args.arg().int(rateRules.length).end();
    for (const rule of rateRules) {
      const { emissionMs, toleranceMs } = gcraParams(rule);
      args.arg().int(emissionMs).end().arg().int(toleranceMs).end().arg().int(1).end();
    }
    args.arg().int(request.streamCap).end().arg().int(request.ttlMs).end().arg().int(request.reserveMicros).end();
    for (const window of poolWindows) args.arg().int(limits[window]).end();
    for (const window of poolWindows) args.arg().int(windows[window].resetsAt.getTime() + POOL_KEY_SLACK_MS).end();
    args.arg().text(request.requestId).end();
    args.arg().int(request.reserveMicros).text('|').text(payerId).text('|').text(request.class);
    for (const window of poolWindows) args.text('|').text(windows[window].key);
    args.text(request.streamCap > 0 ? '|1|' : '|0|').text(this.#instanceId);
    if (cap) args.text('|k:').text(cap.keyId);
    args.end();
    if (cap) {
      for (const window of keyCapWindows) args.arg().int(cap[window] ?? -1).end();
      for (const window of keyCapWindows) args.arg().int(windows[window].resetsAt.getTime() + POOL_KEY_SLACK_MS).end();
    }
  }

  async holdKeyCap(request: AdmissionRequest): Promise<KeyBudgetRefusal | null> {
    const cap = request.keyCap;
    if (!cap) return null;
    const { payerId, windows } = request;
    const tag = this.#tag(payerId);
    const keys = [...keyCapWindows.map((window) => keyCapKey(cap.keyId, windows[window].key, tag)), `kcaph:${request.requestId}${tag}`, `${EPOCH}${tag}`];
    const args = [
      request.reserveMicros,
      ...keyCapWindows.map((window) => cap[window] ?? -1),
      ...keyCapWindows.map((window) => windows[window].resetsAt.getTime() + POOL_KEY_SLACK_MS),
      `${request.reserveMicros}|${cap.keyId}|${windows.day.key}|${windows.month.key}`,
      // Outlives the credit hold (the reservation TTL), whose sweep ends it.
      request.ttlMs + 86_400_000,
    ];
    let result = await this.#redis.svcCapHold(keys.length, ...keys, ...args);
    if (result[0] === 4) {
      await this.#reconcileOnce();
      result = await this.#redis.svcCapHold(keys.length, ...keys, ...args);
      if (result[0] === 4) throw new Error('the pools are not reconciled against the ledger yet');
    }
    if (result[0] === 5) return { ok: false, reason: 'key_budget', window: keyCapWindows[result[1]! - 1]!, usedMicros: result[2]!, limitMicros: result[3]! };
    return null;
  }

  async readKeyCap(keyId: string, payerId: string, windows: CurrentWindows): Promise<Record<'day' | 'month', Micros>> {
    const tag = this.#tag(payerId);
    const [day, month] = await this.#redis.mget(keyCapWindows.map((window) => keyCapKey(keyId, windows[window].key, tag)));
    return { day: Math.max(0, Number(day ?? 0)), month: Math.max(0, Number(month ?? 0)) };
  }

  async releaseKeyCap(requestId: string, payerId: string, costMicros: Micros): Promise<boolean> {
    const tag = this.#tag(payerId);
    const record = await this.#redis.get(`kcaph:${requestId}${tag}`);
    if (!record) return false;
    const [, keyId, day, month] = record.split('|') as [string, string, string, string];
    const released = await this.#redis.svcCapRelease(3, `kcaph:${requestId}${tag}`, keyCapKey(keyId, day, tag), keyCapKey(keyId, month, tag), costMicros);
    return released === 1;
  }

  async settle(items: readonly { ref: ReservationRef; costMicros: Micros }[]): Promise<boolean[]> {
    if (items.length === 0) return [];
    // One script per shard (one on a single Redis): a script's keys must share a slot.
    const groups = new Map<string, number[]>();
    items.forEach(({ ref }, i) => {
      const tag = this.#tag(ref.payerId);
      const group = groups.get(tag);
      if (group) group.push(i);
      else groups.set(tag, [i]);
    });
    const out: boolean[] = new Array<boolean>(items.length);
    await Promise.all(
      [...groups].map(async ([tag, indexes]) => {
        const keys: string[] = [];
        const args: (string | number)[] = [];
        for (const i of indexes) {
          const { ref, costMicros } = items[i]!;
          this.#settleArgs(keys, args, ref.requestId, ref.payerId, ref.class, ref.windows, costMicros, this.#instanceId, tag, ref.capKeyId);
        }
        const existed = await this.#redis.svcSettle(keys.length, ...keys, ...args);
        indexes.forEach((i, j) => (out[i] = existed[j] === 1));
      }),
    );
    return out;
  }

  async expired(now: number, limit: number): Promise<ExpiredReservation[]> {
    // Every shard's index at once (auto-pipelined: one write per node), then the records of the first `limit`.
    const perShard = await Promise.all(this.#shards.map((tag) => this.#redis.zrangebyscore(`res:index${tag}`, '-inf', now, 'LIMIT', 0, limit)));
    const out: ExpiredReservation[] = [];
    for (const [s, ids] of perShard.entries()) {
      if (ids.length === 0) continue;
      const tag = this.#shards[s]!;
      out.push(...(await this.#load(ids.slice(0, limit - out.length), tag, (id) => this.#redis.zrem(`res:index${tag}`, id))));
      if (out.length >= limit) break;
    }
    return out;
  }

  async heartbeat(): Promise<boolean> {
    return (await this.#redis.svcHeartbeat(1, 'instances', this.#instanceId)) === 1;
  }

  async orphaned(limit: number): Promise<ExpiredReservation[]> {
    const dead = (await this.#redis.svcDeadInstances(1, 'instances', DEAD_AFTER_MS)).filter((id) => id !== this.#instanceId);
    for (const instance of dead) {
      const sets = this.#shards.map((tag) => `res:inst:${instance}${tag}`);
      const perShard = await Promise.all(sets.map((set) => this.#redis.srandmember(set, limit)));
      const s = perShard.findIndex((ids) => ids.length > 0);
      if (s === -1) {
        // Everything it held is settled: forget the instance.
        if (this.#cluster) await Promise.all([this.#redis.zrem('instances', instance), ...sets.map((set) => this.#redis.del(set))]);
        else await this.#redis.multi().zrem('instances', instance).del(sets[0]!).exec();
        continue;
      }
      return this.#load(perShard[s]!, this.#shards[s]!, (id) => this.#redis.srem(sets[s]!, id));
    }
    return [];
  }

  async leave(): Promise<void> {
    await this.#redis.zrem('instances', this.#instanceId);
  }

  /** Reservation records and checkpoints of these turns; ids whose record is gone are dropped from their index. */
  async #load(ids: string[], tag: string, drop: (id: string) => Promise<unknown>): Promise<ExpiredReservation[]> {
    if (ids.length === 0) return [];
    const [records, checkpoints] = await Promise.all([this.#redis.mget(ids.map((id) => `res:${id}${tag}`)), this.#redis.mget(ids.map((id) => `ckpt:${id}${tag}`))]);
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

  /**
   * Writes a round of checkpoints: one script call per shard (and per `CHECKPOINT_BATCH`). `listed`: streams
   * admitted under a lease, to list under it (`lckpt:<lease>`) as those have no reservation of their own for
   * the sweeper to find — once per stream, with the round's first call (leases are single-Redis only).
   */
  async checkpoint(items: readonly { ref: CheckpointRef; entry: LedgerEntry }[], listed: readonly { leaseId: string; requestId: string }[] = []): Promise<void> {
    if (items.length === 1 && listed.length === 0 && !this.#cluster) {
      // One checkpoint (a quiet tick's final one, most often): a plain SET written as RESP, cheaper for
      // Redis and svc than a script call.
      const [{ ref, entry }] = items as [{ ref: CheckpointRef; entry: LedgerEntry }];
      await setNow(this.#redis as Redis, `ckpt:${ref.requestId}`, [JSON.stringify(entry)], { unit: 'PX', value: CHECKPOINT_TTL_MS });
      return;
    }
    // One call per shard and batch: its rows as JSON, made once (a NOSCRIPT resend writes the call again).
    const calls: CheckpointCall[] = [];
    const open = new Map<string, CheckpointCall>();
    for (const { ref, entry } of items) {
      const tag = this.#tag(ref.payerId);
      let call = open.get(tag);
      if (!call || call.ids.length === CHECKPOINT_BATCH) {
        call = { tag, ids: [], rows: [], listed: [] };
        open.set(tag, call);
        calls.push(call);
      }
      call.ids.push(ref.requestId);
      call.rows.push(JSON.stringify(entry));
    }
    if (listed.length > 0) {
      if (calls.length === 0) calls.push({ tag: '', ids: [], rows: [], listed });
      else calls[0]!.listed = listed;
    }
    // Written to the socket now, not corked for the tick: a final checkpoint is in the kernel before its reply ends.
    await Promise.all(calls.map((call) => checkpointCall.call<number>(this.#redis, call.tag, (args) => writeCheckpointArgs(args, call), false)));
  }

  async checkpointsOf(refs: readonly CheckpointRef[]): Promise<(LedgerEntry | null)[]> {
    if (refs.length === 0) return [];
    // One MGET per shard (a cluster's multi-key command stays in one slot).
    const byTag = groupByTag(refs, (ref) => this.#tag(ref.payerId));
    const out: (LedgerEntry | null)[] = refs.map(() => null);
    await Promise.all(
      [...byTag].map(async ([tag, group]) => {
        const found = await this.#redis.mget(group.map(({ item }) => `ckpt:${item.requestId}${tag}`));
        group.forEach(({ index }, i) => (out[index] = found[i] ? (JSON.parse(found[i]!) as LedgerEntry) : null));
      }),
    );
    return out;
  }

  async dropCheckpoints(refs: readonly CheckpointRef[]): Promise<void> {
    if (refs.length === 0) return;
    const byTag = groupByTag(refs, (ref) => this.#tag(ref.payerId));
    await Promise.all([...byTag].map(([tag, group]) => this.#redis.unlink(...group.map(({ item }) => `ckpt:${item.requestId}${tag}`))));
  }

  async settleExpired(requestId: string, costMicros: Micros, payerId?: string): Promise<boolean> {
    if (this.#cluster && payerId === undefined) throw new Error('settleExpired needs the payer on a Redis Cluster');
    const tag = this.#tag(payerId ?? '');
    const record = await this.#redis.get(`res:${requestId}${tag}`);
    if (!record) return false;
    const [, payer, cls, day, week, month, stream, owner, capped] = record.split('|') as [string, string, ModelClass, string, string, string, string, string | undefined, string | undefined];
    const windows = {
      day: { key: day, resetsAt: new Date(0) },
      week: { key: week, resetsAt: new Date(0) },
      month: { key: month, resetsAt: new Date(0) },
    } as unknown as CurrentWindows;
    const keys: string[] = [];
    const args: (string | number)[] = [];
    const capKeyId = capped?.startsWith('k:') ? capped.slice(2) : undefined;
    this.#settleArgs(keys, args, requestId, payer, cls, windows, costMicros, owner ?? this.#instanceId, tag, capKeyId);
    const [existed] = await this.#redis.svcSettle(keys.length, ...keys, ...args);
    // A stream lease's slots are members of their own (`<lease>:<i>`), not the record's id.
    if (requestId.startsWith(LEASE_PREFIX) && Number(stream) > 0) await this.releaseSlots({ requestId, payerId: payer }, 1, Number(stream));
    return existed === 1;
  }

  async read(payerId: string, windows: CurrentWindows): Promise<PoolUsage[]> {
    const slots = modelClasses.flatMap((cls) => poolWindows.map((window) => ({ cls, window })));
    const tag = this.#tag(payerId);
    const values = await this.#redis.mget(slots.map(({ cls, window }) => poolKey(payerId, cls, windows[window].key, tag)));
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
    tag: string,
    capKeyId: string | undefined,
  ): void {
    keys.push(
      `res:${requestId}${tag}`,
      `res:index${tag}`,
      poolKey(payerId, cls, windows.day.key, tag),
      poolKey(payerId, cls, windows.week.key, tag),
      poolKey(payerId, cls, windows.month.key, tag),
      `streams:${payerId}${tag}`,
      `ckpt:${requestId}${tag}`,
      `res:inst:${owner}${tag}`,
      // Untouched placeholders (in the same slot) when the reservation holds no key's counters.
      capKeyId === undefined ? `kcap:-:d${tag}` : keyCapKey(capKeyId, windows.day.key, tag),
      capKeyId === undefined ? `kcap:-:m${tag}` : keyCapKey(capKeyId, windows.month.key, tag),
    );
    args.push(
      requestId,
      costMicros,
      windows.day.resetsAt.getTime() + POOL_KEY_SLACK_MS,
      windows.week.resetsAt.getTime() + POOL_KEY_SLACK_MS,
      windows.month.resetsAt.getTime() + POOL_KEY_SLACK_MS,
    );
  }

  #tag(payerId: string): string {
    return shardTag(this.#cluster, payerId);
  }
}

/** Items grouped by a key (a shard's tag), each with its index in `items`. */
function groupByTag<T>(items: readonly T[], tagOf: (item: T) => string): Map<string, { item: T; index: number }[]> {
  const groups = new Map<string, { item: T; index: number }[]>();
  items.forEach((item, index) => {
    const tag = tagOf(item);
    let group = groups.get(tag);
    if (!group) groups.set(tag, (group = []));
    group.push({ item, index });
  });
  return groups;
}
