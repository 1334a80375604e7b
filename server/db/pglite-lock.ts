/**
 * PGlite runs PostgreSQL inside one process: two processes on the same data directory each keep their own
 * buffers and WAL position, so the second one's writes are invisible to the first and can corrupt the
 * files. A pid file turns that into a clear refusal (e.g. `svc search ingest` while `npm start` runs on
 * the same ./data). A lock left by a process that died is taken over.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class DatabaseInUseError extends Error {
  override name = 'DatabaseInUseError';
  /** The process holding the data directory. */
  readonly holder: number;
  constructor(message: string, holder: number) {
    super(message);
    this.holder = holder;
  }
}

/** Takes the lock on `dataDir`; the returned function releases it. */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, 'pglite.pid');
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw error;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      // The same process reopening after a close it never finished is not a second PostgreSQL.
      if (holder > 0 && holder !== process.pid && alive(holder)) {
        throw new DatabaseInUseError(
          `the embedded database in ${dataDir} is in use by process ${holder} (a running svc?): stop it first, or set DATABASE_URL to use PostgreSQL`,
          holder,
        );
      }
      rmSync(path, { force: true });
    }
  }
  return () => {
    try {
      if (Number.parseInt(readFileSync(path, 'utf8'), 10) === process.pid) rmSync(path, { force: true });
    } catch {
      // Already gone: nothing to release.
    }
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
