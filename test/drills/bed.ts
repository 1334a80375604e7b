/**
 * The failure drills' test bed: real svc processes (`node server/main.ts`, as `npm start` runs it) on a
 * fresh PostgreSQL database and a Redis of their own choosing, the scripted upstream as a separate process,
 * and TCP proxies the drill can cut. Nothing shared is ever stopped: PostgreSQL "goes down" by cutting the
 * proxy in front of it, and a Redis that must restart is a private `redis-server` on a free port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { defaultPlans } from '../../server/config/catalogue.ts';
import { freePort, spawnPinned, waitForPort, type Child } from '../bench/procs.ts';
import { createMember } from '../bench/svc.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { testRedisUrl } from '../helpers/env.ts';
import { CuttableProxy } from '../helpers/tcp-proxy.ts';

export const ROOT = resolve(import.meta.dirname, '../..');

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Polls `check` every `everyMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`drill: gave up waiting for ${what} after ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** A private `redis-server` (no persistence, like a cache that restarts empty) on a free port. */
export class PrivateRedis {
  port = 0;
  #proc: ChildProcess | null = null;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.#proc = proc;
    await until('the private redis-server', async () => {
      const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined);
      try {
        await client.connect();
        return (await client.ping()) === 'PONG' ? true : undefined;
      } catch {
        return undefined;
      } finally {
        client.disconnect();
      }
    }, 10_000, 50);
  }

  /** Stops it (its data is gone: no persistence). */
  async stop(): Promise<void> {
    const proc = this.#proc;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((done) => proc.once('exit', done));
    proc.kill('SIGKILL');
    await exited;
    this.#proc = null;
  }
}

export interface Member {
  accountId: string;
  email: string;
  /** API keys (svc_live_…), minted over HTTP with the member's web session. */
  keys: string[];
  keyIds: string[];
}

export interface Instance {
  name: string;
  url: string;
  child: Child;
}

export interface BedOptions {
  /** Put PostgreSQL behind a proxy the drill can cut. */
  pgProxy?: boolean;
  /** Use a private redis-server the drill can restart (else the shared Redis, with a prefix of its own). */
  privateRedis?: boolean;
  /** Extra svc config. */
  config?: Record<string, unknown>;
}

export class Bed {
  readonly id = randomBytes(4).toString('hex');
  readonly prefix = `svc-drill:${this.id}:`;
  readonly dir = mkdtempSync(join(tmpdir(), 'svc-drill-'));
  database!: TestDatabase;
  /** A client straight to the drill's database (never through the proxy). */
  db!: pg.Pool;
  /** A client straight to the Redis the instances use (never through a proxy), with their prefix. */
  redis!: Redis;
  pgProxy: CuttableProxy | null = null;
  privateRedis: PrivateRedis | null = null;
  upstream!: Child;
  upstreamUrl = '';
  readonly instances: Instance[] = [];
  readonly #options: BedOptions;
  #configFile = '';

  constructor(options: BedOptions = {}) {
    this.#options = options;
  }

  get redisUrl(): string {
    return this.privateRedis?.url ?? testRedisUrl;
  }

  async start(): Promise<void> {
    this.database = await createTestDatabase();
    this.db = new pg.Pool({ connectionString: this.database.url, max: 4 });
    if (this.#options.privateRedis) {
      this.privateRedis = new PrivateRedis();
      await this.privateRedis.start();
    }
    this.redis = new Redis(this.redisUrl, { keyPrefix: this.prefix, maxRetriesPerRequest: 1 });
    this.redis.on('error', () => undefined); // the drill restarts this Redis on purpose
    let databaseUrl = this.database.url;
    if (this.#options.pgProxy) {
      const target = new URL(this.database.url);
      this.pgProxy = new CuttableProxy(new URL(`tcp://${target.hostname}:${target.port || 5432}`));
      await this.pgProxy.listen();
      databaseUrl = Object.assign(new URL(this.database.url), { host: `127.0.0.1:${this.pgProxy.port}` }).toString();
    }
    this.upstream = spawnPinned('upstream', process.execPath, [resolve(ROOT, 'test/bench/upstream-main.ts'), '0'], { ipc: true, log: 'ignore' });
    const port = await new Promise<number>((done, fail) => {
      this.upstream.proc.once('message', (message: { type: string; port: number }) => (message.type === 'ready' ? done(message.port) : fail(new Error('upstream'))));
      this.upstream.proc.once('exit', () => fail(new Error('drill: the scripted upstream exited')));
    });
    this.upstreamUrl = `http://127.0.0.1:${port}/v1`;
    this.#configFile = join(this.dir, 'svc.json');
    writeFileSync(
      this.#configFile,
      JSON.stringify({
        server: { host: '127.0.0.1', logLevel: 'warn' },
        database: { url: databaseUrl },
        redis: { url: this.redisUrl, keyPrefix: this.prefix },
        ...this.#options.config,
        rateLimits: { ipPerMinute: 1_000_000, ...(this.#options.config?.rateLimits as object | undefined) },
      }),
    );
  }

  /** Starts one more svc process and waits until it answers /healthz (the first one runs the migrations). */
  async startInstance(name: string): Promise<Instance> {
    const port = await freePort();
    const child = spawnPinned(name, process.execPath, [resolve(ROOT, 'server/main.ts')], {
      cwd: ROOT,
      log: join(this.dir, `${name}.log`),
      env: { PORT: String(port), SVC_CONFIG: this.#configFile, SVC_UPSTREAM_URL: this.upstreamUrl, DATABASE_URL: undefined, REDIS_URL: undefined },
    });
    await waitForPort(port, child, 60_000);
    const url = `http://127.0.0.1:${port}`;
    await until(`${name} /healthz`, async () => ((await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) ? true : undefined), 30_000, 100);
    const instance = { name, url, child };
    this.instances.push(instance);
    return instance;
  }

  /** A verified member (written to the database), signed in on `via`, with `keys` API keys. */
  async member(via: Instance, keys: number): Promise<Member> {
    const email = `drill-${this.id}-${randomBytes(4).toString('hex')}@example.com`;
    const password = `drill ${randomBytes(8).toString('hex')}`;
    await createMember(this.database.url, email, password);
    const login = await fetch(`${via.url}/api/membership/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: via.url },
      body: JSON.stringify({ email, password }),
    });
    if (!login.ok) throw new Error(`drill: sign-in answered ${login.status}: ${await login.text()}`);
    const { account } = (await login.json()) as { account: { id: string } };
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const member: Member = { accountId: account.id, email, keys: [], keyIds: [] };
    for (let i = 0; i < keys; i++) {
      const mint = await fetch(`${via.url}/api/membership/auth/api-keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: via.url, cookie },
        body: JSON.stringify({ name: `drill ${i}` }),
      });
      if (!mint.ok) throw new Error(`drill: creating a key answered ${mint.status}: ${await mint.text()}`);
      const body = (await mint.json()) as { token: string; id: string };
      member.keys.push(body.token);
      member.keyIds.push(body.id);
    }
    return member;
  }

  /** Plans big enough that the drills never meet a pool. */
  static roomyPlans(): Record<string, unknown> {
    const huge = { day: 1_000_000, week: 5_000_000, month: 20_000_000 };
    return { ...defaultPlans, free: { ...defaultPlans.free, requestsPerMinute: 100_000, pools: { fast: huge, premium: huge } } };
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.instances.map((instance) => instance.child.stop(5_000)));
    await this.upstream?.stop(1_000).catch(() => undefined);
    await this.pgProxy?.close().catch(() => undefined);
    if (!this.privateRedis) {
      // The shared Redis: delete this drill's keys, never anything else.
      let cursor = '0';
      const raw = new Redis(testRedisUrl, { maxRetriesPerRequest: 1 });
      do {
        const [next, keys] = await raw.scan(cursor, 'MATCH', `${this.prefix}*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) await raw.unlink(...keys);
      } while (cursor !== '0');
      raw.disconnect();
    }
    this.redis?.disconnect();
    await this.privateRedis?.stop();
    await this.db?.end().catch(() => undefined);
    await this.database?.drop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One streamed chat completion: counts the content chunks that arrive until it ends or breaks. */
export interface StreamResult {
  status: number;
  chunks: number;
  /** Saw `data: [DONE]`. */
  complete: boolean;
  error: string | null;
}

export async function streamChat(url: string, key: string, script: Record<string, unknown>, onChunk?: () => void): Promise<StreamResult> {
  const result: StreamResult = { status: 0, chunks: 0, complete: false, error: null };
  try {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1-fast', stream: true, max_tokens: 8192, messages: [{ role: 'user', content: `#script ${JSON.stringify(script)}` }] }),
    });
    result.status = response.status;
    if (!response.ok || !response.body) {
      await response.text().catch(() => undefined);
      return result;
    }
    const decoder = new TextDecoder();
    let tail = '';
    for await (const bytes of response.body) {
      const text = tail + decoder.decode(bytes as Uint8Array, { stream: true });
      const matches = text.match(/"content":"tok "/g)?.length ?? 0;
      result.chunks += matches;
      for (let i = 0; i < matches; i++) onChunk?.();
      if (text.includes('data: [DONE]')) result.complete = true;
      // Keep the unfinished end of the text for the next read (a chunk split across two reads).
      const cut = text.lastIndexOf('\n');
      tail = cut >= 0 ? text.slice(cut + 1) : text;
      if (tail.includes('"content":"tok "')) tail = '';
    }
  } catch (error) {
    result.error = String((error as Error).cause ?? error);
  }
  return result;
}

/** One short non-streamed chat completion. */
export async function chat(url: string, key: string): Promise<{ status: number; code: string | null }> {
  try {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.1-fast', max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] }),
    });
    const body = (await response.json().catch(() => ({}))) as { code?: string };
    return { status: response.status, code: body.code ?? null };
  } catch {
    return { status: 0, code: 'connection' };
  }
}
