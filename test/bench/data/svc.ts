/**
 * svc as `npm start` runs it (its own process), on the loaded database and the shared Redis under a key
 * prefix of its own (its keys deleted when it stops). Limits that a benchmark from one address would meet
 * (600 requests a minute per IP) are raised; everything else is the default config.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { stringify } from 'yaml';
import { freePort, spawnPinned, waitForPort } from '../procs.ts';
import { ROOT } from '../systems.ts';

const REDIS_URL = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Applies svc's migrations to `databaseUrl` (`npm run migration:up`). */
export async function migrate(databaseUrl: string): Promise<void> {
  await promisify(execFile)(process.execPath, [resolve(ROOT, 'server/cli/migrate.ts'), 'up'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl, SVC_CONFIG: '' } });
}

export interface RunningSvc {
  origin: string;
  /** svc's process id (for its CPU time in /proc). */
  pid: number;
  stop(): Promise<void>;
}

export async function startSvc(databaseUrl: string, log: string): Promise<RunningSvc> {
  const id = randomBytes(4).toString('hex');
  const prefix = `svc_bench_data_${id}:`;
  const configPath = resolve(ROOT, 'bench-results', `svc-bench-data-${id}.yaml`);
  mkdirSync(resolve(ROOT, 'bench-results'), { recursive: true });
  writeFileSync(
    configPath,
    stringify({
      server: { host: '127.0.0.1', logLevel: 'warn' },
      redis: { keyPrefix: prefix },
      rateLimits: { ipPerMinute: 100_000_000 },
      upstreamDiscovery: { enabled: false },
    }),
  );
  const port = await freePort();
  const child = spawnPinned('svc', process.execPath, ['--max-semi-space-size=8', '--heap-growing-percent=50', resolve(ROOT, 'server/main.ts')], {
    cwd: ROOT,
    log,
    env: { ...process.env, PORT: String(port), DATABASE_URL: databaseUrl, REDIS_URL, SVC_CONFIG: configPath, NODE_COMPILE_CACHE: resolve(ROOT, 'node_modules/.cache/node-compile') },
  });
  try {
    await waitForPort(port, child, 60_000);
  } catch (error) {
    await child.stop(5_000);
    rmSync(configPath, { force: true });
    throw error;
  }
  return {
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      await child.stop(10_000);
      rmSync(configPath, { force: true });
      await deleteKeys(prefix);
    },
  };
}

/** SCAN + UNLINK on this run's prefix; never FLUSHDB (the Redis is shared). */
async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
