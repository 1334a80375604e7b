/**
 * Connecting IPs of organisation keys (DESIGN §8.1): every successful `svc_ent_` authentication counts
 * `(key, ip)` without a database write. With Redis the count goes there (one script call, not awaited by
 * the request), so what an instance counted survives it: any instance's flush takes it. Without Redis (or
 * while it is away) it is counted in this instance's memory. At most every half second (and at shutdown) the
 * counts are taken — atomically, so each reaches exactly one flush — and written to PostgreSQL as one
 * upsert (`first_seen_at` the earliest, `last_seen_at` the latest, `request_count` added); then
 * `organisationConnectionsChanged` is published for the organisations touched, on every instance.
 */
import type { RedisClient } from '../../infra/redis.ts';
import type { Database } from '../../db/orm.ts';
import type { EnterpriseEvents } from './enterprise.events.ts';

interface Pending {
  keyId: string;
  organisationId: string;
  ip: string;
  first: number;
  last: number;
  count: number;
}

export const CONNECTION_FLUSH_MS = 500;

/** The three hashes one script reads and writes together: on a Redis Cluster they share a hash tag (one slot). */
function connectionKeys(cluster: boolean): [count: string, first: string, last: string] {
  const base = cluster ? '{enterprise:connections}' : 'enterprise:connections';
  return [`${base}:count`, `${base}:first`, `${base}:last`];
}

/** Adds `count` requests seen between `first` and `last` (epoch ms) for one field. */
const addScript = `
redis.call('HINCRBY', KEYS[1], ARGV[1], tonumber(ARGV[2]))
local first = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if first == 0 or tonumber(ARGV[3]) < first then redis.call('HSET', KEYS[2], ARGV[1], ARGV[3]) end
local last = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
if tonumber(ARGV[4]) > last then redis.call('HSET', KEYS[3], ARGV[1], ARGV[4]) end
return 1`;

/** Takes every pending count (and deletes it) in one step: {counts, firsts, lasts} as flat field/value lists. */
const takeScript = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local result = {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[3])}
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return result`;

type ConnectionRedis = RedisClient & {
  svcConnectionAdd(numKeys: number, ...args: (string | number)[]): Promise<number>;
  svcConnectionTake(numKeys: number, ...args: string[]): Promise<[string[], string[], string[]] | []>;
};

export class ConnectionRecorder {
  readonly #db: Database;
  readonly #redis: ConnectionRedis | null;
  readonly #keys: [string, string, string];
  readonly #events: EnterpriseEvents;
  readonly #onError: (error: unknown) => void;
  #pending = new Map<string, Pending>();
  #timer: NodeJS.Timeout | null = null;
  /** Redis mode: every instance flushes what any instance counted, so a crashed one's counts still arrive. */
  #sweep: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(db: Database, redis: RedisClient | null, events: EnterpriseEvents, onError: (error: unknown) => void) {
    this.#db = db;
    this.#keys = connectionKeys(redis?.isCluster ?? false);
    this.#events = events;
    this.#onError = onError;
    this.#redis = redis as ConnectionRedis | null;
    this.#redis?.defineCommand('svcConnectionAdd', { lua: addScript });
    this.#redis?.defineCommand('svcConnectionTake', { lua: takeScript });
  }

  /** Redis mode: starts the periodic flush of counts left by any instance. */
  start(): void {
    if (!this.#redis || this.#sweep || this.#closed) return;
    this.#sweep = setInterval(() => void this.flush(), CONNECTION_FLUSH_MS).unref();
  }

  record(keyId: string, organisationId: string, ip: string, at = Date.now()): void {
    if (this.#redis && !this.#closed) {
      this.#redis.svcConnectionAdd(3, ...this.#keys, field(keyId, organisationId, ip), 1, at, at).catch(() => this.#remember({ keyId, organisationId, ip, first: at, last: at, count: 1 }));
    } else {
      this.#remember({ keyId, organisationId, ip, first: at, last: at, count: 1 });
    }
    if (!this.#timer && !this.#closed) this.#timer = setTimeout(() => void this.flush(), CONNECTION_FLUSH_MS).unref();
  }

  /** Writes what is counted so far. Calls queue behind each other. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#flushing = this.#flushing.then(() => this.#write()).catch(this.#onError);
    return this.#flushing;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#sweep) clearInterval(this.#sweep);
    this.#sweep = null;
    await this.flush();
  }

  #remember(entry: Pending): void {
    const id = field(entry.keyId, entry.organisationId, entry.ip);
    const now = this.#pending.get(id);
    if (now) {
      now.count += entry.count;
      now.first = Math.min(now.first, entry.first);
      now.last = Math.max(now.last, entry.last);
    } else {
      this.#pending.set(id, { ...entry });
    }
  }

  async #take(): Promise<Pending[]> {
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    if (!this.#redis) return batch;
    let taken: [string[], string[], string[]] | [];
    try {
      taken = await this.#redis.svcConnectionTake(3, ...this.#keys);
    } catch (error) {
      // Redis is away: what this instance counted in memory meanwhile is still written.
      this.#onError(error);
      return batch;
    }
    if (taken.length === 0) return batch;
    const [counts, firsts, lasts] = taken;
    const pairs = (list: string[]) => {
      const map = new Map<string, number>();
      for (let i = 0; i + 1 < list.length; i += 2) map.set(list[i]!, Number(list[i + 1]));
      return map;
    };
    const firstOf = pairs(firsts);
    const lastOf = pairs(lasts);
    for (const [id, count] of pairs(counts)) {
      const [keyId, organisationId, ip] = id.split('|') as [string, string, string];
      const last = lastOf.get(id) ?? Date.now();
      batch.push({ keyId, organisationId, ip, count, first: firstOf.get(id) ?? last, last });
    }
    return batch;
  }

  async #write(): Promise<void> {
    const batch = await this.#take();
    if (batch.length === 0) return;
    const rows = batch.map((entry) => ({
      key_id: entry.keyId,
      organisation_id: entry.organisationId,
      ip: entry.ip,
      first: new Date(entry.first).toISOString(),
      last: new Date(entry.last).toISOString(),
      count: entry.count,
    }));
    try {
      await this.#db.query(
        `insert into organisation_connection (key_id, ip, organisation_id, first_seen_at, last_seen_at, request_count)
         select v.key_id, v.ip, v.organisation_id, min(v.first), max(v.last), sum(v.count)
           from jsonb_to_recordset($1::jsonb) as v(key_id uuid, ip text, organisation_id uuid, first timestamptz, last timestamptz, count bigint)
           join api_key k on k.id = v.key_id
          group by v.key_id, v.ip, v.organisation_id
         on conflict (key_id, ip) do update set
           first_seen_at = least(organisation_connection.first_seen_at, excluded.first_seen_at),
           last_seen_at = greatest(organisation_connection.last_seen_at, excluded.last_seen_at),
           request_count = organisation_connection.request_count + excluded.request_count`,
        [JSON.stringify(rows)],
      );
    } catch (error) {
      // Keep the counts for the next round (merged with what came in since).
      for (const entry of batch) this.#remember(entry);
      if (!this.#timer && !this.#closed) this.#timer = setTimeout(() => void this.flush(), CONNECTION_FLUSH_MS * 2).unref();
      throw error;
    }
    this.#events.connectionsChanged([...new Set(batch.map((entry) => entry.organisationId))]);
  }
}

function field(keyId: string, organisationId: string, ip: string): string {
  return `${keyId}|${organisationId}|${ip}`;
}
