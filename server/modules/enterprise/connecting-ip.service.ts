/**
 * Connecting IPs (DESIGN §8.1) as an organisation's members read and watch them: `(key, ip) → firstSeenAt,
 * lastSeenAt, requestCount`. Counting them on each use is the `ConnectionRecorder`'s (connections.ts),
 * which the organisation-key resolver calls; this reads what it flushed.
 */
import type * as authz from '../../authz/authz.ts';
import type { Database } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import type { ConnectionRecorder } from './connections.ts';
import type { EnterpriseEvents } from './enterprise.events.ts';
import type { Organisations } from './organisation.service.ts';

export interface ConnectionView {
  keyId: string;
  keyName: string;
  keyPrefix: string;
  ip: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
  requestCount: number;
}

interface ConnectionRow {
  key_id: string;
  name: string;
  prefix: string;
  ip: string;
  first_seen_at: Date;
  last_seen_at: Date;
  request_count: string | number;
}

interface Deps {
  organisations: Organisations;
  recorder: ConnectionRecorder;
  events: EnterpriseEvents;
}

export class ConnectingIps {
  readonly #db: Database;
  readonly #deps: Deps;

  constructor(db: Database, deps: Deps) {
    this.#db = db;
    this.#deps = deps;
  }

  /** Connecting IPs of the organisation's keys (revoked keys' too), most recently seen first. */
  async list(actor: authz.Actor, organisationId: string, options: { keyId?: string | null } = {}): Promise<ConnectionView[]> {
    await this.#deps.organisations.access(actor, organisationId, 'organisation:read');
    const params: unknown[] = [organisationId];
    let filter = '';
    if (options.keyId) {
      if (!isUuid(options.keyId)) return [];
      filter = 'and c."key_id" = ?';
      params.push(options.keyId);
    }
    const rows = await this.#db.orm.em.getConnection().execute<ConnectionRow[]>(
      `select c."key_id", k."name", k."prefix", c."ip", c."first_seen_at", c."last_seen_at", c."request_count"
         from "organisation_connection" c join "api_key" k on k."id" = c."key_id"
        where c."organisation_id" = ? ${filter}
        order by c."last_seen_at" desc, c."ip" limit 1000`,
      params,
      'all',
    );
    return rows.map((row) => ({
      keyId: row.key_id,
      keyName: row.name,
      keyPrefix: row.prefix,
      ip: row.ip,
      firstSeenAt: new Date(row.first_seen_at),
      lastSeenAt: new Date(row.last_seen_at),
      requestCount: Number(row.request_count),
    }));
  }

  /** Yields at once, then whenever the organisation's connecting IPs changed on any instance (members only). */
  async watch(actor: authz.Actor, organisationId: string): Promise<AsyncIterableIterator<true>> {
    await this.#deps.organisations.assertCanRead(actor, organisationId);
    return this.#deps.events.connections(organisationId);
  }

  /** Writes what was counted so far (tests and shutdown). */
  flush(): Promise<void> {
    return this.#deps.recorder.flush();
  }
}
