/**
 * svc as the system under test, with everything on: real PostgreSQL and Redis, API-key auth, rate limits
 * (set high), large pools, the ledger. It gets its own database (`svc_bench_<random>`, dropped at the end)
 * and its own Redis key prefix (its keys deleted at the end; the shared Redis is never flushed). The
 * member's account is written straight to the database (web sign-up needs the emailed code, and the mail
 * stays in the child's outbox); it signs in and mints a personal key over HTTP, as a real user would.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { stringify } from 'yaml';
import { defaultPlans } from '../../server/config/catalogue.ts';
import { mergeDeep } from '../../server/config/merge.ts';
import { hashPassword } from '../../server/modules/account/password.ts';
import { freePort, nodeCommand, spawnPinned, waitForPort, type Child } from './procs.ts';
import { ROOT, statsDelta, statsSum, sutCores, type Delivered, type System, type Upstream, type UpstreamStats } from './systems.ts';

const PG_ADMIN = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface LedgerCheck {
  ok: boolean;
  message: string;
  ledger: { rows: number; inputTokens: number; outputTokens: number; estimated: number; byStatus: Record<string, number>; breakdown: unknown[] };
  upstream: UpstreamStats;
}

export interface SvcSystem extends System {
  ledgerCheck(emitted: UpstreamStats, delivered?: Delivered): Promise<LedgerCheck>;
  /** Ledger rows once settlement has caught up with `expected` (or stopped moving for 2 s). */
  ledgerRows(expected: number): Promise<number>;
  /** The request ids in its ledger: with two svc systems on one upstream, which delivered replies are whose. */
  requestIds(): Promise<Set<string>>;
  /** svc's address and the member's key headers, for scenarios beyond chat (search). */
  origin: string;
  headers: Record<string, string>;
}

/** Pools and limits so large the benchmark never meets them; everything else is the default config. */
function benchConfig(prefix: string, logLevel?: string, exact?: boolean, gateway: Record<string, unknown> = {}): object {
  const huge = { day: 1_000_000, week: 5_000_000, month: 20_000_000 };
  // The load comes from one address: the per-address connection cap (256) would refuse S4's 500 streams.
  const serverConfig = { host: '127.0.0.1', maxConnectionsPerIp: 100_000, ...(logLevel ? { logLevel } : {}) };
  return {
    server: serverConfig,
    redis: { keyPrefix: prefix },
    plans: { ...defaultPlans, free: { ...defaultPlans.free, requestsPerMinute: 100_000_000, pools: { fast: huge, premium: huge } } },
    rateLimits: { ipPerMinute: 100_000_000, concurrentStreamsPerAccount: 100_000 },
    // The default (256) caps concurrent requests per upstream: S4's 500 and S5's 1,000 streams need more.
    gateway: { connectionsPerUpstream: 4096, ...(exact ? { admissionLeases: { enabled: false } } : {}), ...gateway },
    // The search scenario measures the whole path every time: no answers from the short cache.
    search: { cacheSeconds: 0 },
  };
}

export interface SvcOptions {
  /** Admission leases off (`gateway.admissionLeases.enabled: false`): every request admitted by Redis, for an A/B with `--exact`. */
  exact?: boolean;
  /** Write a V8 CPU profile of svc into this directory (`node --cpu-prof`). */
  profileDir?: string;
  /** Override `server.logLevel` (default: svc's own default, `info`). */
  logLevel?: string;
  /** Extra `node` flags for svc, e.g. `--max-semi-space-size=8`. */
  nodeFlags?: string[];
  /** A SearXNG-shaped backend for hosted search (`SVC_SEARCH_URL`), for the search scenario. */
  searchUrl?: string;
  /** A command the measured svc runs under, e.g. `['valgrind', '--tool=callgrind']` (`instr.ts`). */
  wrap?: string[];
  /** More `gateway` config, e.g. `{ httpLayer: 'fastify', upstreamClient: 'undici' }`. */
  gateway?: Record<string, unknown>;
  /** The system's name in the report (default `svc`). */
  name?: 'svc' | 'svc-libs';
  /** More config, merged over the benchmark's (e.g. `server.trustedProxies`, a plan with small pools). */
  config?: Record<string, unknown>;
  /** Another Redis than `BENCH_REDIS_URL`, e.g. a throwaway Redis Cluster (its keys are left to it). */
  redisUrl?: string;
}

/** svc's chat lane and HTTP/1.1 pool replaced by the libraries they stand in for: the `svc-libs` system. */
export const LIBRARY_PATH = { httpLayer: 'fastify', upstreamClient: 'undici' } as const;

/**
 * The flags `npm start` runs the server with (package.json), so the benchmark measures what ships. Its
 * `--v8-pool-size` is `nproc`, the cores the server may run on: here one, the core each svc is pinned to.
 */
const SERVER_NODE_FLAGS = ['--v8-pool-size=1', '--max-semi-space-size=8', '--heap-growing-percent=50'];
/** Node's compile cache, where `npm start` keeps it (package.json). */
const COMPILE_CACHE = resolve(ROOT, 'node_modules/.cache/node-compile');

export async function startSvc(upstream: Upstream, log: string, options: SvcOptions = {}): Promise<SvcSystem> {
  const group = await startSvcGroup(upstream, 1, () => log, options);
  const instance = group.instances[0]!;
  return {
    name: options.name ?? 'svc',
    pid: instance.pid,
    origin: instance.origin,
    headers: group.headers,
    target: () => ({ origin: instance.origin, path: '/v1/chat/completions', headers: group.headers }),
    stop: group.stop,
    ledgerCheck: group.ledgerCheck,
    ledgerRows: group.ledgerRows,
    requestIds: group.requestIds,
  };
}

/** N svc processes sharing one database, one Redis (one key prefix) and one member's key. */
export interface SvcGroup {
  instances: { origin: string; pid: number }[];
  headers: Record<string, string>;
  /** The group's own database and Redis key prefix. */
  databaseUrl: string;
  prefix: string;
  /** Sends `signal` to instance `index` on purpose (a kill -9 mid-load) and resolves once it has exited. */
  kill(index: number, signal: NodeJS.Signals): Promise<void>;
  ledgerCheck(emitted: UpstreamStats, delivered?: Delivered): Promise<LedgerCheck>;
  ledgerRows(expected: number): Promise<number>;
  requestIds(): Promise<Set<string>>;
  stop(): Promise<void>;
}

/**
 * Starts `count` svc processes against one PostgreSQL database and one Redis key prefix (the first one
 * migrates the database; the others start once it listens). Each is pinned to a core of its own when the
 * machine has cores to spare for them, else they share the system-under-test core. `env` is added to
 * every instance's environment (e.g. `SVC_SOAK_SAMPLE_MS`).
 */
export async function startSvcGroup(upstream: Upstream, count: number, logOf: (index: number) => string, options: SvcOptions & { env?: Record<string, string> } = {}): Promise<SvcGroup> {
  const id = randomBytes(4).toString('hex');
  const database = `svc_bench_${id}`;
  const prefix = `svc_bench_${id}:`;
  const configPath = resolve(ROOT, 'bench-results', `svc-bench-${id}.yaml`);
  // Written before the database exists, so a tree without bench-results/ cannot leave a database behind.
  mkdirSync(dirname(configPath), { recursive: true });
  writeFileSync(configPath, stringify(mergeDeep(benchConfig(prefix, options.logLevel, options.exact, options.gateway), options.config ?? {})));
  const redisUrl = options.redisUrl ?? REDIS_URL;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`create database "${database}"`);
  const databaseUrl = Object.assign(new URL(PG_ADMIN), { pathname: `/${database}` }).toString();

  const children: Child[] = [];
  const instances: { origin: string; pid: number }[] = [];
  const cores = sutCores();
  const spawnOne = async (index: number, measured = true) => {
    const port = await freePort();
    const profile = options.profileDir && measured ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
    // Three minutes to listen: on a small machine shared with other work, a cold start can take over a minute.
    const node = nodeCommand([...profile, ...SERVER_NODE_FLAGS, ...(options.nodeFlags ?? []), resolve(ROOT, 'server/main.ts')], measured ? options.wrap : [], 180_000);
    const child = spawnPinned(count === 1 ? 'svc' : `svc #${index + 1}`, node.command, node.args, {
      core: cores[index % cores.length],
      log: logOf(index),
      cwd: ROOT,
      env: { PORT: String(port), DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, SVC_UPSTREAM_URL: `${upstream.origin}/v1`, SVC_CONFIG: configPath, NODE_COMPILE_CACHE: COMPILE_CACHE, ...(options.searchUrl ? { SVC_SEARCH_URL: options.searchUrl } : {}), ...options.env },
    });
    children[index] = child;
    await waitForPort(port, child, node.listenMs);
    instances[index] = { origin: `http://127.0.0.1:${port}`, pid: child.pid };
  };
  let db: pg.Client | undefined;
  const stop = async () => {
    await db?.end();
    await Promise.all(children.map((child) => child.stop(10_000)));
    await admin.query(`drop database if exists "${database}" with (force)`);
    await admin.end();
    if (!options.redisUrl) await deleteKeys(prefix);
    rmSync(configPath, { force: true });
  };
  try {
    // The first instance migrates the database; the others would race it. It is started twice: svc as it runs
    // after its first start, whose compile cache spares the second start Node's type stripper (package.json).
    await spawnOne(0, false);
    await children[0]!.stop(10_000);
    await spawnOne(0);
    await Promise.all(Array.from({ length: count - 1 }, (_, i) => spawnOne(i + 1)));
    const origin = instances[0]!.origin;
    const key = await signUpAndMintKey(origin, databaseUrl, `bench-${id}@example.com`);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
    // The smoke requests are billed too, so their upstream tokens join the ones the runner counts.
    const before = await upstream.stats();
    for (const instance of instances) await smokeTest(instance.origin, headers);
    const smoke = statsDelta(before, await upstream.stats());
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const ledgerDb = db;
    return {
      instances,
      headers,
      databaseUrl,
      prefix,
      kill: async (index, signal) => {
        const child = children[index]!;
        const exited = new Promise((done) => child.proc.once('exit', done));
        child.kill(signal);
        await exited;
      },
      stop,
      ledgerCheck: (emitted, delivered) => ledgerCheck(ledgerDb, statsSum(emitted, smoke), delivered),
      ledgerRows: async (expected) => (await settledRows(ledgerDb, expected + smoke.requests)) - smoke.requests,
      requestIds: async () => new Set((await ledgerDb.query<{ request_id: string }>('select request_id from usage_ledger')).rows.map((row) => row.request_id)),
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

/** A verified account with a password, written to svc's database (what the emailed sign-up code would create). */
export async function createMember(databaseUrl: string, email: string, password: string, role: 'member' | 'support' | 'admin' = 'member'): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query(
      `insert into "account" ("id", "created_at", "updated_at", "email", "role", "plan_package", "email_verified_at", "password_hash")
       values ($1, now(), now(), $2, $3, 'free', now(), $4)`,
      [randomUUID(), email, role, await hashPassword(password)],
    );
  } finally {
    await db.end();
  }
}

/** Signs in (`POST /api/membership/auth/login`) as a browser would; the session cookie header to send after. */
export async function signIn(origin: string, email: string, password: string): Promise<string> {
  const response = await fetch(`${origin}/api/membership/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ email, password }),
  });
  if (!response.ok) throw new Error(`sign-in answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
  return response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

/** The member (see `createMember`) signs in and mints a key with the session cookie. */
export async function signUpAndMintKey(origin: string, databaseUrl: string, email: string): Promise<string> {
  const password = `bench-${randomBytes(12).toString('hex')}`;
  await createMember(databaseUrl, email, password);
  const cookie = await signIn(origin, email, password);
  const mint = await fetch(`${origin}/api/membership/auth/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin, cookie },
    body: JSON.stringify({ name: 'bench' }),
  });
  if (!mint.ok) throw new Error(`creating an API key answered ${mint.status}: ${(await mint.text()).slice(0, 200)}`);
  const body = (await mint.json()) as { token?: string; key?: { token?: string } };
  const token = body.token ?? body.key?.token;
  if (!token?.startsWith('svc_live_')) throw new Error(`the API key response carries no svc_live_ token: ${JSON.stringify(body).slice(0, 200)}`);
  return token;
}

async function smokeTest(origin: string, headers: Record<string, string>): Promise<void> {
  const res = await fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'svc-2.1-fast', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 }),
  });
  if (res.status !== 200) throw new Error(`POST /v1/chat/completions answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
}

/** Settlement is off the request path: wait until the row count reaches `expected` or stops moving. */
async function settledRows(db: pg.Client, expected: number): Promise<number> {
  let rows = -1;
  let still = 0;
  for (;;) {
    const { rows: r } = await db.query<{ n: string }>('select count(*) as n from usage_ledger');
    const n = Number(r[0]!.n);
    if (n >= expected) return n;
    still = n === rows ? still + 1 : 0;
    if (still >= 10) return n;
    rows = n;
    await new Promise((done) => setTimeout(done, 200));
  }
}

async function ledgerCheck(db: pg.Client, emitted: UpstreamStats, delivered: Delivered = []): Promise<LedgerCheck> {
  await settledRows(db, emitted.requests);
  const { rows: sums } = await db.query<{ rows: string; input: string; output: string; estimated: string; answered: string; exact_input: string; exact_output: string }>(
    `select count(*) as rows, coalesce(sum(input_tokens), 0) as input, coalesce(sum(output_tokens), 0) as output,
            count(*) filter (where estimated) as estimated, count(*) filter (where status = 'ok') as answered,
            coalesce(sum(input_tokens) filter (where not estimated), 0) as exact_input,
            coalesce(sum(output_tokens) filter (where not estimated), 0) as exact_output
       from usage_ledger`,
  );
  const { rows: statuses } = await db.query<{ status: string; n: string }>('select status, count(*) as n from usage_ledger group by status');
  const { rows: breakdown } = await db.query(
    `select stream, status, estimated, count(*)::int as rows, sum(input_tokens)::int as input, sum(output_tokens)::int as output
       from usage_ledger group by 1, 2, 3 order by 1, 2, 3`,
  );
  const s = sums[0]!;
  const ledger = {
    rows: Number(s.rows),
    inputTokens: Number(s.input),
    outputTokens: Number(s.output),
    estimated: Number(s.estimated),
    byStatus: Object.fromEntries(statuses.map((r) => [r.status, Number(r.n)])),
    breakdown,
  };
  const answered = Number(s.answered);
  const exact = { input: Number(s.exact_input), output: Number(s.exact_output) };
  const left = ledger.rows - answered;
  const unanswered =
    left > 0
      ? `; ${left} rows for requests not answered (${Object.entries(ledger.byStatus).filter(([status]) => status !== 'ok').map(([status, n]) => `${n} ${status}`).join(', ')}; ${ledger.estimated} estimated, ${ledger.inputTokens - exact.input} input + ${ledger.outputTokens - exact.output} output tokens)`
      : '';
  if (delivered.length === 0) {
    // Totals only (scale-out and soak runs): every reply the upstream delivered is one answered row holding its
    // tokens. Requests whose client left before the upstream answered were aborted there (nothing delivered or
    // counted) and svc bills them its estimate of the prompt, as the spec says: listed, not compared.
    const replies = emitted.requests - emitted.aborted;
    const ok = exact.input === emitted.promptTokens && exact.output === emitted.completionTokens && answered === replies;
    const message = `ledger ${answered} answered rows, ${exact.input} input + ${exact.output} output tokens from the upstream's usage; upstream delivered ${replies} replies, ${emitted.promptTokens} + ${emitted.completionTokens} tokens${unanswered}`;
    return { ok, message, ledger, upstream: emitted };
  }
  // Request by request (svc sends its turn id upstream as `x-request-id`; the scripted upstream keeps the tokens
  // of every reply it delivered by that id): every answered row is a delivered reply and bills exactly its
  // tokens; every delivered reply has a row. Totals cannot be compared under overload: another gateway's
  // requests its clients gave up on still reach the shared upstream during svc's turn. A reply that crossed
  // svc's abort for a client that left (delivered, but svc had closed the connection) has that client's row.
  const { rows: all } = await db.query<{ request_id: string; status: string; input_tokens: number; output_tokens: number }>(
    `select request_id, status, input_tokens, output_tokens from usage_ledger`,
  );
  const rowOf = new Map(all.map((row) => [row.request_id, row]));
  const sent = new Map(delivered.map(([requestId, input, output, times]) => [requestId, { input, output, times }]));
  const wrong: string[] = [];
  const notDelivered: string[] = [];
  for (const row of all) {
    if (row.status !== 'ok') continue;
    const reply = sent.get(row.request_id);
    if (!reply) notDelivered.push(row.request_id);
    else if (reply.input / reply.times !== row.input_tokens || reply.output / reply.times !== row.output_tokens) wrong.push(row.request_id);
  }
  const crossed = new Map<string, number>();
  let repeated = 0;
  const rowless: string[] = [];
  for (const [requestId, reply] of sent) {
    const row = rowOf.get(requestId);
    if (!row) {
      rowless.push(requestId);
      continue;
    }
    repeated += reply.times - 1;
    if (row.status !== 'ok') crossed.set(row.status, (crossed.get(row.status) ?? 0) + 1);
  }
  const ok = wrong.length === 0 && notDelivered.length === 0 && rowless.length === 0;
  const list = (ids: string[]) => `${ids.length} (${ids.slice(0, 3).join(', ')}${ids.length > 3 ? ', …' : ''})`;
  const message =
    `ledger ${answered} answered rows, ${exact.input} input + ${exact.output} output tokens, each equal to the reply the upstream delivered for its request id` +
    (wrong.length > 0 ? `, except ${list(wrong)}` : '') +
    (notDelivered.length > 0 ? `; answered rows with no delivered reply: ${list(notDelivered)}` : '') +
    (rowless.length > 0 ? `; delivered replies with no ledger row: ${list(rowless)}` : '') +
    (crossed.size > 0 ? `; ${[...crossed.values()].reduce((a, b) => a + b, 0)} replies crossed svc's abort for a client that left (${[...crossed].map(([status, n]) => `${n} ${status}`).join(', ')})` : '') +
    (repeated > 0 ? `; ${repeated} replies to a request svc sent again` : '') +
    unanswered +
    `; the upstream counted ${emitted.requests - emitted.aborted} replies, ${emitted.promptTokens} + ${emitted.completionTokens} tokens, in svc's turns`;
  return { ok, message, ledger, upstream: emitted };
}

/** Deletes this run's keys (SCAN + UNLINK on its prefix). Never FLUSHDB: the Redis is shared. */
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
