/**
 * `npm run migration:up`: applies pending migrations to the configured database (they also run at start).
 * `npm run migration:create -- <name>`: writes a new migration with the SQL that brings the database in
 * line with the entities; add it to `migrations/index.ts` and review the SQL (it must also run on PGlite).
 */
import { ConfigError, loadConfig } from '../config/config.ts';
import { createLogger } from '../log.ts';
import { openDatabase } from '../db/orm.ts';
import { entities } from '../modules/entities.ts';

const [command, name] = process.argv.slice(2);
if (command !== 'up' && command !== 'create') {
  process.stderr.write('usage: node server/cli/migrate.ts up | create <name>\n');
  process.exit(2);
}

try {
  const config = loadConfig();
  const log = createLogger({ server: { ...config.server, logLevel: 'warn' } });
  // Opening the database applies every pending migration.
  const db = await openDatabase(config, log, entities);
  try {
    const executed = await db.orm.migrator.getExecuted();
    process.stdout.write(`${db.mode} database is at ${executed.at(-1)?.name ?? '(no migrations)'} (${executed.length} applied)\n`);
    if (command === 'create') {
      const result = await db.orm.migrator.create(undefined, false, false, name);
      if (!result.fileName) process.stdout.write('no schema changes: nothing to create\n');
      else process.stdout.write(`wrote migrations/${result.fileName}; add it to migrations/index.ts\n`);
    }
  } finally {
    await db.close();
  }
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`svc: ${error.message}\n`);
  process.exit(1);
}
