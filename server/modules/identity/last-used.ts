/**
 * Records when credentials were last used without a write per request: touches are kept in memory and
 * flushed every few seconds as one `UPDATE … FROM unnest(…)` per table. A credential used a thousand times
 * between flushes costs one row update. Flushed on shutdown too.
 */
import type { Database } from '../../db/orm.ts';

export type TouchedTable = 'session' | 'api_key' | 'oauth_authorization';

export class LastUsedRecorder {
  readonly #db: Database;
  readonly #pending: Record<TouchedTable, Map<string, Date>> = { session: new Map(), api_key: new Map(), oauth_authorization: new Map() };
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> = Promise.resolve();
  #onError: (error: unknown) => void;

  constructor(db: Database, options: { intervalMs?: number; onError?: (error: unknown) => void } = {}) {
    this.#db = db;
    this.#onError = options.onError ?? (() => undefined);
    this.#timer = setInterval(() => void this.flush(), options.intervalMs ?? 5_000).unref();
  }

  touch(table: TouchedTable, id: string, at = new Date()): void {
    this.#pending[table].set(id, at);
  }

  /** Writes every pending touch. Safe to call concurrently; calls queue behind each other. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write()).catch(this.#onError);
    return this.#flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  async #write(): Promise<void> {
    for (const table of ['session', 'api_key', 'oauth_authorization'] as const) {
      const pending = this.#pending[table];
      if (pending.size === 0) continue;
      const rows = [...pending].map(([id, at]) => ({ id, at: at.toISOString() }));
      pending.clear();
      // One statement per table; rows travel as one JSON parameter. Table names come from the closed union above.
      await this.#db.orm.em.getConnection().execute(
        `update "${table}" t set "last_used_at" = v.at
           from jsonb_to_recordset(?::jsonb) as v(id uuid, at timestamptz)
          where t."id" = v.id and (t."last_used_at" is null or t."last_used_at" < v.at)`,
        [JSON.stringify(rows)],
        'run',
      );
    }
  }
}
