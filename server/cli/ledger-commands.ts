/**
 * `svc ledger archive --before YYYY-MM [--dir PATH]`, `svc ledger restore <file>` and `svc ledger check
 * [--from YYYY-MM-DD] [--to YYYY-MM-DD]`: the ledger's old months off the database and back, and the
 * rollups checked against the ledger, and the daily revenue rollup against the orders
 * (metering/ledger-archive.ts). They work on the configured database
 * directly (DATABASE_URL, or embedded PGlite under database.dataDir — stop a server using the same PGlite
 * directory first: PGlite allows one process at a time).
 */
import { pino } from 'pino';
import { loadConfig, type Config, type Env } from '../config/config.ts';
import { openDatabase, type Database } from '../db/orm.ts';
import { entities } from '../modules/entities.ts';
import { archiveLedger, checkLedger, defaultArchiveDir, restoreLedger, type LedgerDifference } from '../metering/ledger-archive.ts';
import { CliError } from './client-commands.ts';
import type { CliMessages } from './messages.ts';

export interface LedgerFlags {
  before?: string;
  dir?: string;
  from?: string;
  to?: string;
}

/** Lines printed for at most this many differences (all are counted). */
const SHOWN_DIFFERENCES = 200;

export async function ledgerCommand(env: Env, sub: string | undefined, args: string[], flags: LedgerFlags, say: CliMessages, out: (line: string) => void): Promise<number | null> {
  switch (sub) {
    case 'archive': {
      if (!flags.before) throw new CliError(say.ledgerUsage);
      const config = loadConfig(env);
      const dir = flags.dir ?? defaultArchiveDir(config.database.dataDir);
      return withDatabase(config, async (db) => {
        const archived = await archiveLedger(db, flags.before!, dir);
        if (archived.length === 0) out(say.ledgerNothingToArchive(flags.before!));
        for (const month of archived) out(say.ledgerArchived(month.month, month.rows, month.file));
        return 0;
      });
    }
    case 'restore': {
      if (args.length !== 1) throw new CliError(say.ledgerUsage);
      return withDatabase(loadConfig(env), async (db) => {
        const restored = await restoreLedger(db, args[0]!);
        out(say.ledgerRestored(restored.month, restored.rows));
        return 0;
      });
    }
    case 'check':
      return withDatabase(loadConfig(env), async (db) => {
        const check = await checkLedger(db, { from: flags.from ?? null, to: flags.to ?? null });
        for (const difference of check.differences.slice(0, SHOWN_DIFFERENCES)) out(describe(difference));
        out(say.ledgerChecked(check.compared, check.differences.length, check.timezone, check.archivedMonths));
        return check.differences.length === 0 ? 0 : 1;
      });
    default:
      return null;
  }
}

function describe(d: LedgerDifference): string {
  if (d.rollup === 'revenue_day') {
    const orders = (f: LedgerDifference['ledger']) => (f ? `${f.requests} orders, ${f.costMicros} minor` : '—');
    return `${d.rollup} ${d.bucket} ${d.model} ${d.currency}: orders ${orders(d.ledger)} | rollup ${orders(d.rolledUp)}`;
  }
  const side = (f: LedgerDifference['ledger']) => (f ? `${f.requests} req, ${f.inputTokens} in, ${f.outputTokens} out, ${f.costMicros} µ` : '—');
  return `${d.rollup} ${d.bucket}${d.payerId ? ` payer ${d.payerId}` : ''} ${d.model} ${d.status} ${d.currency}: ledger ${side(d.ledger)} | rollup ${side(d.rolledUp)}`;
}

async function withDatabase(config: Config, work: (db: Database) => Promise<number>): Promise<number> {
  const db = await openDatabase(config, pino({ level: 'warn' }), entities);
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}
