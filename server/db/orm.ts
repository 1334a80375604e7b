/**
 * The database: PostgreSQL when `database.url` is set, otherwise embedded PGlite under
 * `database.dataDir` (it survives restarts). Both run the same migrations from `migrations/`. The entities
 * are the caller's (`server/modules/entities.ts`): the database layer stands below the modules.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import type { EntitySchema } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import type { SqlEntityManager, SqlMikroORM } from '@mikro-orm/sql';
import { CompiledQuery } from 'kysely';
import type { Logger } from 'pino';
import { migrationsList } from '../../migrations/index.ts';
import type { Config } from '../config/config.ts';
import { withTimeout } from '../infra/deadline.ts';
import { CopyIn } from './copy-in.ts';
import { ensureLedgerPartitions, setRollupTimezone } from './ledger-upkeep.ts';
import { lockDataDir } from './pglite-lock.ts';

export type Orm = SqlMikroORM;
export type Em = SqlEntityManager;

/** What svc uses of pg's `Pool` (MikroORM's PostgreSQL connection owns it). */
interface NativePool {
  query(config: { text: string; values: unknown[]; name?: string } | CopyIn): Promise<{ rows: unknown[] }>;
}

export interface Database {
  orm: Orm;
  mode: 'postgres' | 'embedded';
  /** Rejects if the database does not answer `select 1` within `timeoutMs`. */
  ping(timeoutMs?: number): Promise<void>;
  /**
   * One statement with `$1`-style parameters bound by the driver. The ORM's `execute` inlines parameters
   * into the SQL text, escaping them character by character: right for small values, but for the ledger's
   * batch (one JSON document of hundreds of rows) that escaping was a sixth of all svc allocated under load.
   *
   * `name` makes it a prepared statement on PostgreSQL: parsed and planned once per connection, not on
   * every call. For a statement run on every settlement round, planning was over a third of the server's
   * CPU for an insert of a few rows.
   */
  query(sql: string, params: readonly unknown[], name?: string): Promise<void>;
  /**
   * `query` that answers its rows. For reads on page views of the partitioned ledger: planning a query over
   * every month's partition cost PostgreSQL ~10 times its execution (5–7 ms against 0.5 ms for a page of
   * history at bench scale 0.1); a named statement is planned once per connection and then runs its cached
   * generic plan.
   */
  rows<T>(sql: string, params: readonly unknown[], name?: string): Promise<T[]>;
  /**
   * `copy … from stdin` with `data` in COPY's text format, on PostgreSQL; null on embedded PGlite, which
   * takes its rows by `query`. Rejects with the backend's error (and writes nothing) if any row is refused.
   */
  copy: ((sql: string, data: string) => Promise<void>) | null;
  close(): Promise<void>;
}

export async function openDatabase(config: Config, log: Logger, entities: readonly EntitySchema[]): Promise<Database> {
  const shared = {
    entities,
    extensions: [Migrator],
    migrations: {
      migrationsList,
      path: resolve(import.meta.dirname, '../../migrations'),
      tableName: 'mikro_orm_migrations',
      silent: true,
      snapshot: false,
    },
    // Entities are only loaded inside a request context (or an explicit fork); never through the global em.
    allowGlobalContext: false,
    debug: false,
    logger: (message: string) => log.debug({ orm: true }, message),
  };
  const url = config.database.url;
  let orm: Orm;
  let unlock: () => void = () => undefined;
  if (url) {
    // Only the driver in use is loaded: PGlite alone costs ~80 MB of memory.
    const { MikroORM: PostgresORM } = await import('@mikro-orm/postgresql');
    orm = (await PostgresORM.init({ ...shared, clientUrl: url, pool: { min: 0, max: 10 } })) as unknown as Orm;
  } else {
    const dataDir = resolve(config.database.dataDir, 'pglite');
    mkdirSync(dataDir, { recursive: true });
    unlock = lockDataDir(resolve(config.database.dataDir));
    const { MikroORM: PgliteORM } = await import('@mikro-orm/pglite');
    orm = (await PgliteORM.init({ ...shared, dbName: dataDir }).catch((error: unknown) => {
      unlock();
      throw error;
    })) as unknown as Orm;
  }
  try {
    await orm.migrator.up();
  } catch (error) {
    await orm.close(true);
    unlock();
    throw error;
  }
  const mode = url ? 'postgres' : 'embedded';
  const database = { orm } as Database;
  try {
    // Before any turn settles: its month exists, and its day is cut in the configured zone.
    if (await setRollupTimezone(database, config.timezone)) log.warn({ timezone: config.timezone }, 'usage rollups: days re-cut in the configured time zone');
    await ensureLedgerPartitions(database);
  } catch (error) {
    await orm.close(true);
    unlock();
    throw error;
  }
  // PostgreSQL: statements go to pg's pool directly, which keeps each connection's prepared statements.
  const pool = url ? ((await orm.em.getConnection().getNativeClient()) as NativePool) : null;
  log.info({ mode, dataDir: url ? undefined : config.database.dataDir }, mode === 'embedded' ? 'database: embedded PGlite' : 'database: PostgreSQL');
  return {
    orm,
    mode,
    ping: async (timeoutMs = 2000) => {
      await withTimeout(orm.em.getConnection().execute('select 1'), timeoutMs, 'database');
    },
    query: async (sql, params, name) => {
      if (pool) await pool.query({ text: sql, values: [...params], name });
      else await orm.em.getConnection().getClient().executeQuery(CompiledQuery.raw(sql, [...params]));
    },
    rows: async <T>(sql: string, params: readonly unknown[], name?: string) => {
      if (pool) return (await pool.query({ text: sql, values: [...params], name })).rows as T[];
      return (await orm.em.getConnection().getClient().executeQuery(CompiledQuery.raw(sql, [...params]))).rows as T[];
    },
    copy: pool
      ? async (sql, data) => {
          await pool.query(new CopyIn(sql, data));
        }
      : null,
    close: async () => {
      await orm.close();
      unlock();
    },
  };
}
