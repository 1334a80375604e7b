/**
 * Connecting IPs of organisation keys (DESIGN §8.1): every successful `svc_ent_` authentication counts
 * `(key, ip)` in memory — no I/O on the request path — and at most every second (and at shutdown) the
 * counts go to PostgreSQL as one upsert (`first_seen_at` the earliest, `last_seen_at` the latest,
 * `request_count` added), after which `organisationConnectionsChanged` is published for the organisations
 * touched, on every instance. A crash loses at most the last second's counts, never a key's first sighting
 * for long: the next request records it again.
 */
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

export class ConnectionRecorder {
  readonly #db: Database;
  readonly #events: EnterpriseEvents;
  readonly #onError: (error: unknown) => void;
  #pending = new Map<string, Pending>();
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(db: Database, events: EnterpriseEvents, onError: (error: unknown) => void) {
    this.#db = db;
    this.#events = events;
    this.#onError = onError;
  }

  record(keyId: string, organisationId: string, ip: string, at = Date.now()): void {
    const id = `${keyId} ${ip}`;
    const entry = this.#pending.get(id);
    if (entry) {
      entry.count += 1;
      if (at > entry.last) entry.last = at;
    } else {
      this.#pending.set(id, { keyId, organisationId, ip, first: at, last: at, count: 1 });
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
    await this.flush();
  }

  async #write(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
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
         select v.key_id, v.ip, v.organisation_id, v.first, v.last, v.count
           from jsonb_to_recordset($1::jsonb) as v(key_id uuid, ip text, organisation_id uuid, first timestamptz, last timestamptz, count bigint)
           join api_key k on k.id = v.key_id
         on conflict (key_id, ip) do update set
           first_seen_at = least(organisation_connection.first_seen_at, excluded.first_seen_at),
           last_seen_at = greatest(organisation_connection.last_seen_at, excluded.last_seen_at),
           request_count = organisation_connection.request_count + excluded.request_count`,
        [JSON.stringify(rows)],
      );
    } catch (error) {
      // Put the counts back so the next round tries again (merged with what came in since).
      for (const entry of batch) {
        const id = `${entry.keyId} ${entry.ip}`;
        const now = this.#pending.get(id);
        if (now) {
          now.count += entry.count;
          now.first = Math.min(now.first, entry.first);
        } else this.#pending.set(id, entry);
      }
      if (!this.#timer && !this.#closed) this.#timer = setTimeout(() => void this.flush(), CONNECTION_FLUSH_MS * 2).unref();
      throw error;
    }
    this.#events.connectionsChanged([...new Set(batch.map((entry) => entry.organisationId))]);
  }
}
