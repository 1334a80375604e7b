/**
 * The one way tests boot the app: the real `buildApp` on a port chosen up front (so `server.baseUrl` and
 * `server.webUrl` — the OAuth issuer, device verification URI, media links, allowed Origin — are the
 * address clients really use), in one of the two modes the service supports: `real` (PostgreSQL + Redis,
 * the CI default) or `embedded` (PGlite + in-process). Seed data with `seed(app)` (helpers/seed.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../server/app.ts';
import { parseConfig, type Config } from '../../server/config/config.ts';
import { mergeDeep } from '../../server/config/merge.ts';
import { createLogger } from '../../server/log.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { testGatewayModes, testRedisUrl } from './env.ts';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Extra config (as it would appear in YAML). */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Collects log lines (JSON strings) when given. */
  logLines?: string[];
  /** How long `close()` lets requests in flight finish (default 10 s: a hung test must not hang the suite). */
  drainMs?: number;
  /** The address to listen on (default 127.0.0.1; `url` stays the loopback address either way). */
  host?: string;
  /** Runs after `buildApp` and before `listen` (e.g. to add a route a test needs). */
  beforeListen?: (app: FastifyInstance) => void | Promise<void>;
}

export async function startApp(base: Record<string, unknown>, options: StartOptions = {}): Promise<TestApp> {
  // The port is chosen before the app is built (its URLs name it), so another socket on this machine — an
  // outgoing connection takes its local port from the same ephemeral range — can take it in between: that
  // start is thrown away and made again on a new port.
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    try {
      return await startOnPort(port, base, options);
    } catch (error) {
      const taken = error as NodeJS.ErrnoException & { port?: number };
      if (attempt >= 5 || taken.code !== 'EADDRINUSE' || taken.port !== port) throw error;
    }
  }
}

async function startOnPort(port: number, base: Record<string, unknown>, options: StartOptions): Promise<TestApp> {
  const url = `http://127.0.0.1:${port}`;
  // A test's app never goes looking for model servers on this machine's usual ports (another test's, or a
  // developer's Ollama, would answer): tests that want discovery turn it on and name their own port.
  const quiet = mergeDeep<Record<string, unknown>>({ upstreamDiscovery: { enabled: false } }, base);
  const addressed = mergeDeep<Record<string, unknown>>(quiet, { server: { baseUrl: url, webUrl: url }, gateway: testGatewayModes });
  const layered = mergeDeep<Record<string, unknown>>(addressed, options.config ?? {});
  const config = parseConfig(layered, { ...options.env });
  const logLines = options.logLines;
  const logger = logLines
    ? // A write may carry several lines (request lines leave together): one entry per line.
      createLogger({ server: { ...config.server, logLevel: 'debug' } }, { write: (text: string) => void logLines.push(...text.split('\n').filter(Boolean)) })
    : // Quiet, except that a shutdown step that missed its deadline is printed: a hang must be visible.
      pino({ level: 'error' }, { write: (line: string) => void (line.includes('"msg":"shutdown:') && process.stderr.write(line)) });
  const app = await buildApp(config, { logger, drainMs: options.drainMs ?? 10_000 });
  await options.beforeListen?.(app);
  try {
    await app.listen({ port, host: options.host ?? '127.0.0.1' });
  } catch (error) {
    // A start that fails (a port taken) must not leave its database pool and timers behind.
    await app.close();
    throw error;
  }
  running.set(url, app);
  return {
    app,
    config,
    url,
    close: () => {
      running.delete(url);
      return app.close();
    },
  };
}

/** Apps this process started, by URL: `Browser.signUp` reads the emailed code from the app's outbox. */
const running = new Map<string, FastifyInstance>();

/** The app this process serves at `url`, if any. */
export function appAt(url: string): FastifyInstance | undefined {
  return running.get(url);
}

/**
 * Waits until each app's settlement round is written — ledger rows, then the pools — instead of sleeping:
 * first the turns still being measured (their counts made in the token-counting worker), then the round.
 */
export async function settled(...apps: TestApp[]): Promise<void> {
  await Promise.all(
    apps.map(async ({ app: { services } }) => {
      await services.pipeline.measured();
      await services.settlement.flush();
    }),
  );
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

/** Config for real PostgreSQL + Redis: a fresh database and a Redis key prefix of its own. */
export async function realMode(): Promise<{ config: Record<string, unknown>; database: TestDatabase; cleanup(): Promise<void> }> {
  const database = await createTestDatabase();
  const keyPrefix = `svc-test:${randomBytes(4).toString('hex')}:`;
  return {
    database,
    config: {
      server: { logLevel: 'silent' },
      database: { url: database.url },
      redis: { url: testRedisUrl, keyPrefix },
    },
    cleanup: async () => {
      await database.drop();
      await deleteRedisKeys(keyPrefix);
    },
  };
}

/** Removes every key a test file's apps left under its prefix (Redis is shared by every run). */
async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(testRedisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Config for embedded mode: PGlite in a fresh temp directory, in-process Redis stand-ins. */
export function embeddedMode(): { config: Record<string, unknown>; dataDir: string; cleanup(): Promise<void> } {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-embedded-'));
  return {
    dataDir,
    config: { server: { logLevel: 'silent' }, database: { dataDir } },
    cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}
