/**
 * The ledger's schema upkeep (Migration20261209010000_ledger_partitions): monthly partitions made ahead of
 * time, so a turn always lands in its month (the default partition only catches what falls outside every
 * month), and the rollups' days cut in the configured time zone. Every instance may run it at once: the
 * database functions take an advisory lock and do nothing when there is nothing to do.
 */
import type { SqlMikroORM } from '@mikro-orm/sql';

/** What the upkeep needs of a database: its ORM (orm.ts calls this while opening one, so it cannot import it back). */
interface WithOrm {
  orm: SqlMikroORM;
}

/** Months made ahead of the current one. */
export const PARTITION_MONTHS_AHEAD = 2;

/** Makes this month's partition and the next `PARTITION_MONTHS_AHEAD`; returns how many were new. */
export async function ensureLedgerPartitions(db: WithOrm, now = new Date()): Promise<number> {
  const row = await db.orm.em.getConnection().execute<{ made: number }>('select usage_ledger_ensure_partitions(?::timestamptz, ?) as made', [now.toISOString(), PARTITION_MONTHS_AHEAD], 'get');
  return Number(row.made);
}

/**
 * Sets the time zone the rollups cut days in; true when it changed (the day rollups were rebuilt from the
 * hour rollups, exact wherever the zone's offset is whole hours).
 */
export async function setRollupTimezone(db: WithOrm, timezone: string): Promise<boolean> {
  const row = await db.orm.em.getConnection().execute<{ changed: boolean }>('select usage_rollup_set_timezone(?) as changed', [timezone], 'get');
  return row.changed;
}
