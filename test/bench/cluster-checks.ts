/**
 * The checks of `npm run bench:cluster` (cluster.ts), each against three svc instances (`SvcGroup`) behind
 * HAProxy (`Balancer`), returning rows for the table. Members, keys and organisations are made over svc's
 * own HTTP (sign-in, key minting, the enterprise application), as a person would; only the account row is
 * written to the database (sign-up's emailed code stays in the instance's outbox).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { createClient } from 'graphql-ws';
import { Redis, type Cluster } from 'ioredis';
import pg from 'pg';
import { WebSocket } from 'ws';
import { defaultPlans } from '../../server/config/catalogue.ts';
import { formatMicros } from '../../server/config/money.ts';
import { poolKey, shardTag } from '../../server/metering/pool.redis-store.ts';
import { PoolWindows } from '../../server/metering/windows.ts';
import type { TestRedisCluster } from '../helpers/redis-cluster.ts';
import type { Balancer } from './haproxy.ts';
import { percentile } from './scenarios.ts';
import { createMember, type SvcGroup } from './svc.ts';
import { ROOT } from './systems.ts';

export interface Row {
  check: string;
  /** null: a measurement, not a check. */
  ok: boolean | null;
  result: string;
}

export interface Bench {
  group: SvcGroup;
  balancer: Balancer;
  db: pg.Client;
  redis: Redis | Cluster;
  cluster: boolean;
  say: (text: string) => void;
  close(): Promise<void>;
}

type Check = (bench: Bench) => Promise<Row[]>;

/** The edge member's pool: exactly `EDGE_TURNS` reservations of `EDGE_BODY` fit, and half of one more. */
const EDGE_TURNS = 20;
const EDGE_BURST = 120;
const EDGE_MAX_TOKENS = 2000;
/**
 * Each turn bills its whole reservation (the upstream reports the prompt as long as the request and
 * max_tokens of output: the bounds svc reserves), so a settled turn frees nothing and the count admitted
 * does not depend on how the burst interleaves with settlements on a busy machine. The reply is slow too, so
 * the pool's fullest moment (every admission made) can be read.
 */
function edgeBody(): string {
  const make = (promptTokens: number) =>
    JSON.stringify({
      model: 'svc-2.1-fast',
      max_tokens: EDGE_MAX_TOKENS,
      messages: [{ role: 'user', content: `#script {"latencyMs":1500,"usageOverride":{"prompt_tokens":${promptTokens},"completion_tokens":${EDGE_MAX_TOKENS}}}\nthe edge of a pool` }],
    });
  const bytes = Buffer.byteLength(make(100));
  const body = make(bytes);
  if (Buffer.byteLength(body) !== bytes) throw new Error('bench: the edge body should be 100–999 bytes');
  return body;
}
const EDGE_BODY = edgeBody();
// svc reserves the request's size as its prompt bound plus max_tokens, at the fast class's promoted prices
// (0.14 and 0.28 per 1M tokens, 70 % off: 42,000 and 84,000 micros), rounded up.
const EDGE_RESERVATION = Math.ceil((Buffer.byteLength(EDGE_BODY) * 42_000 + EDGE_MAX_TOKENS * 84_000) / 1_000_000);
const EDGE_LIMIT = EDGE_TURNS * EDGE_RESERVATION + Math.floor(EDGE_RESERVATION / 2);

/** The load: short non-streamed turns, the upstream answering after 20 ms (so a kill finds some in flight). */
const LOAD_BODY = JSON.stringify({ model: 'svc-2.1-fast', max_tokens: 64, messages: [{ role: 'user', content: '#script {"latencyMs":20}\nhello' }] });
const LOAD_CONNECTIONS = 32;

/**
 * Over the benchmark's config: svc trusts the balancer's `X-Forwarded-For` (127.0.0.1 only, so the source
 * addresses 127.0.0.11–15 behind it are the clients), a dead instance is swept within a second of being
 * declared dead, and the Pro plan is the edge member's small pool.
 */
export const clusterConfig = {
  server: { trustedProxies: ['127.0.0.1/32'] },
  gateway: { sweepIntervalSeconds: 1 },
  plans: {
    pro: {
      ...defaultPlans.pro,
      requestsPerMinute: 1_000_000,
      pools: { fast: { day: formatMicros(EDGE_LIMIT), week: 100, month: 100 }, premium: { day: 1, week: 5, month: 20 } },
    },
  },
};

export async function openBench(group: SvcGroup, balancer: Balancer, redisCluster: TestRedisCluster | null, say: (text: string) => void): Promise<Bench> {
  const db = new pg.Client({ connectionString: group.databaseUrl });
  await db.connect();
  const redis = redisCluster ? redisCluster.client(group.prefix) : new Redis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix: group.prefix });
  return {
    group,
    balancer,
    db,
    redis,
    cluster: redisCluster !== null,
    say,
    close: async () => {
      await db.end();
      redis.disconnect();
    },
  };
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const ms = (value: number) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;

async function until<T>(check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 100): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined || Date.now() > deadline) return value;
    await sleep(everyMs);
  }
}

/** How the balancer spread requests since `before` (one of its `served()` readings): `a / b / c`. */
async function spread(bench: Bench, before: Record<string, number>): Promise<string> {
  const after = await bench.balancer.served();
  return Object.keys(after)
    .sort()
    .map((name) => after[name]! - (before[name] ?? 0))
    .join(' / ');
}

// People: signed in on one instance (cookie), with keys minted there.

interface Person {
  accountId: string;
  origin: string;
  cookie: string;
}

async function person(bench: Bench, via: string, label: string, planPackage = 'free'): Promise<Person> {
  const email = `cluster-${label}-${randomBytes(4).toString('hex')}@example.com`;
  const password = `bench-${randomBytes(12).toString('hex')}`;
  await createMember(bench.group.databaseUrl, email, password);
  if (planPackage !== 'free') await bench.db.query('update "account" set "plan_package" = $1 where "email" = $2', [planPackage, email]);
  const login = await fetch(`${via}/api/membership/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: via }, body: JSON.stringify({ email, password }) });
  if (!login.ok) throw new Error(`bench: sign-in answered ${login.status}: ${await login.text()}`);
  const { account } = (await login.json()) as { account: { id: string } };
  return { accountId: account.id, origin: via, cookie: login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ') };
}

async function call(who: Person, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${who.origin}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), origin: who.origin, cookie: who.cookie },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function mintKey(who: Person): Promise<{ token: string; id: string }> {
  const response = await call(who, 'POST', '/api/membership/auth/api-keys', { name: 'cluster bench' });
  if (!response.ok) throw new Error(`bench: minting a key answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as { token: string; id: string };
}

async function chat(origin: string, token: string, body: string): Promise<{ status: number; code: string | null; requestId: string | null }> {
  const response = await fetch(`${origin}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
  const text = await response.text();
  // Not svc's envelope when the balancer answers itself (503 with no instance up).
  const code = response.ok ? null : text.startsWith('{') ? ((JSON.parse(text) as { code?: string }).code ?? null) : `balancer ${response.status}`;
  return { status: response.status, code, requestId: response.headers.get('x-request-id') };
}

const windows = () => new PoolWindows('UTC').current();

/** A payer's fast-class pool counter in Redis for the current `window`. */
async function pool(bench: Bench, payerId: string, window: 'day' | 'week' | 'month'): Promise<number> {
  return Number(await bench.redis.get(poolKey(payerId, 'fast', windows()[window].key, shardTag(bench.cluster, payerId))));
}

// The checks.

interface LoadRun {
  rps: number;
  p50: number;
  p99: number;
  ok: string[];
  statuses: Record<string, number>;
  errors: number;
}

/** autocannon through the balancer at `rate` req/s; `during` runs alongside (the kill). The 200s' turn ids are kept. */
async function load(bench: Bench, token: string, rate: number, durationMs: number, during?: () => Promise<void>): Promise<LoadRun> {
  const ok: string[] = [];
  const statuses: Record<string, number> = {};
  const run = autocannon({
    url: bench.balancer.origin,
    connections: LOAD_CONNECTIONS,
    overallRate: rate,
    duration: durationMs / 1000,
    requests: [
      {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: LOAD_BODY,
        onResponse: (status, _body, _context, headers) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === 200) ok.push(headers['x-request-id']!);
        },
      },
    ],
  });
  const [result] = await Promise.all([run, during?.()]);
  return { rps: result['2xx'] / result.duration, p50: result.latency.p50, p99: result.latency.p99, ok, statuses, errors: result.errors + result.timeouts };
}

export function checkLoad(rate: number, durationMs: number): Check {
  return async (bench) => {
    const before = await bench.balancer.served();
    const run = await load(bench, bench.group.headers.authorization!.slice('Bearer '.length), rate, durationMs);
    const other = Object.entries(run.statuses).filter(([status]) => status !== '200');
    return [
      {
        check: `load through HAProxy (${rate} req/s asked, ${LOAD_CONNECTIONS} connections)`,
        ok: null,
        result: `${Math.round(run.rps)} req/s, p50 ${ms(run.p50)}, p99 ${ms(run.p99)}; ${run.ok.length} answered 200, ${other.length > 0 ? other.map(([s, n]) => `${n}× ${s}`).join(', ') : 'no other status'}, ${run.errors} errors; per instance ${await spread(bench, before)}`,
      },
    ];
  };
}

export const checkEdge: Check = async (bench) => {
  const member = await person(bench, bench.group.instances[0]!.origin, 'edge', 'pro');
  const { token } = await mintKey(member);
  const before = await bench.balancer.served();
  let release!: () => void;
  const barrier = new Promise<void>((done) => (release = done));
  const attempts = Array.from({ length: EDGE_BURST }, async () => {
    await barrier;
    return chat(bench.balancer.origin, token, EDGE_BODY);
  });
  release();
  // While the burst waits on the slow upstream: every admission is made, none settled — the pool at its fullest.
  await sleep(900);
  const peak = await pool(bench, member.accountId, 'day');
  const results = await Promise.all(attempts);
  const answered = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status === 402 && r.code === 'quota_exceeded').length;
  const rows = await until(async () => {
    const { rows } = await bench.db.query<{ n: number; cost: string }>('select count(*)::int as n, coalesce(sum(cost_micros), 0) as cost from usage_ledger where payer_id = $1', [member.accountId]);
    return rows[0]!.n >= answered.length ? rows[0]! : undefined;
  }, 10_000);
  const billed = Number(rows?.cost ?? -1);
  // Unused lease budget goes back within idle time (single Redis): wait for the counter to settle on the ledger.
  const used = (await until(async () => ((await pool(bench, member.accountId, 'day')) === billed ? billed : undefined), 10_000)) ?? (await pool(bench, member.accountId, 'day'));
  const other = results.filter((r) => r.status !== 200 && !(r.status === 402 && r.code === 'quota_exceeded'));
  // A request refused otherwise (a 503 on an overloaded machine) is not admitted either: what counts is that
  // exactly N were, and that the ledger and the pool agree on them.
  const ok = answered.length === EDGE_TURNS && rows?.n === EDGE_TURNS && used === billed && peak <= EDGE_LIMIT;
  return [
    {
      check: `pool exact at the edge (room for ${EDGE_TURNS} turns, ${EDGE_BURST} at once)`,
      ok,
      result: `${answered.length} answered, ${refused} quota_exceeded${other.length > 0 ? `, ${other.map((r) => `${r.status} ${r.code}`).join(', ')}` : ''}; ledger ${rows?.n ?? '?'} rows = ${billed} µ = pool ${used} µ; fullest ${peak} of ${EDGE_LIMIT} µ; per instance ${await spread(bench, before)}`,
    },
  ];
};

const USAGE_UPDATED = 'subscription { usageUpdated { pools { class window used { amountMicros } } } }';
const LIVE_TURNS = 20;
/** Turns this far apart: fewer than the 8 a second that would give the payer an admission lease (pool counters then move in chunks). */
const LIVE_SPACING_MS = 300;

export const checkLiveUsage: Check = async (bench) => {
  const [a, ...others] = bench.group.instances;
  const watcher = await person(bench, a!.origin, 'watcher');
  const { token } = await mintKey(watcher);
  const seen: { at: number; used: number }[] = [];
  const client = createClient({ url: `${a!.origin.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${token}` } });
  const closed = new Promise<void>((done, fail) =>
    client.subscribe<{ usageUpdated: { pools: { class: string; window: string; used: { amountMicros: number } }[] } }>(
      { query: USAGE_UPDATED },
      {
        next: (result) => {
          const day = result.data?.usageUpdated.pools.find((p) => p.class === 'fast' && p.window === 'day');
          if (day) seen.push({ at: performance.now(), used: day.used.amountMicros });
        },
        error: fail,
        complete: done,
      },
    ),
  );
  closed.catch(() => undefined);
  const usedSeen = (value: number, after: number) => until(async () => seen.find((event) => event.used === value && event.at >= after), 5_000, 2);
  const latencies: number[] = [];
  let missed = 0;
  try {
    // A first turn on A: what one turn costs (every turn here is the same request and the same reply).
    const first = await chat(a!.origin, token, LOAD_BODY);
    const row = await until(async () => (await bench.db.query<{ cost_micros: string }>('select cost_micros from usage_ledger where request_id = $1', [first.requestId])).rows[0], 10_000);
    const cost = Number(row?.cost_micros ?? 0);
    await usedSeen(cost, 0);
    for (let turn = 1; turn <= LIVE_TURNS; turn++) {
      const sent = performance.now();
      const served = await chat(others[turn % others.length]!.origin, token, LOAD_BODY);
      const answered = performance.now();
      const event = served.status === 200 ? await usedSeen(cost * (turn + 1), sent) : undefined;
      if (event) latencies.push(Math.max(0, event.at - answered));
      else missed++;
      await sleep(Math.max(0, LIVE_SPACING_MS - (performance.now() - sent)));
    }
  } finally {
    await client.dispose();
  }
  return [
    {
      check: `live usage: subscriber on A, ${LIVE_TURNS} turns on B and C`,
      ok: missed === 0,
      result: `${latencies.length} of ${LIVE_TURNS} seen on A; from the reply to the settled pools on A: p50 ${ms(percentile(latencies, 50))}, p95 ${ms(percentile(latencies, 95))}, max ${ms(Math.max(...latencies))}`,
    },
  ];
};

/** Requests per source address (127.0.0.11 …): different counts, so a mix-up between addresses shows. */
const IP_REQUESTS = [10, 20, 30, 40, 50];

/** POSTs `count` chats from `localAddress` through the balancer, 4 at a time over kept-alive connections; the statuses. */
async function chatsFrom(bench: Bench, localAddress: string, token: string, count: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4, localAddress });
  const { hostname, port } = new URL(bench.balancer.origin);
  const one = () =>
    new Promise<number>((done, fail) => {
      const req = httpRequest({ agent, hostname, port, method: 'POST', path: '/v1/chat/completions', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.once('end', () => done(res.statusCode ?? 0));
      });
      req.once('error', fail);
      req.end(LOAD_BODY);
    });
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async (_, lane) => {
      for (let i = lane; i < count; i += 4) statuses.push(await one());
    }),
  );
  agent.destroy();
  return statuses;
}

export const checkIps: Check = async (bench) => {
  const owner = await person(bench, bench.group.instances[0]!.origin, 'org');
  const applied = await call(owner, 'POST', '/graphql', {
    query: 'mutation($input: EnterpriseApplicationInput!) { submitEnterpriseApplication(input: $input) { organisationId } }',
    variables: {
      input: { kind: 'commercial', organisation: `Cluster bench ${randomBytes(4).toString('hex')}`, contactEmail: 'ops@bench.example', website: 'https://bench.example', country: 'DE', useCase: 'Several instances behind a load balancer, measured.', expectedMonthlyTokens: 1_000_000 },
    },
  });
  const organisationId = ((await applied.json()) as { data?: { submitEnterpriseApplication: { organisationId: string } } }).data?.submitEnterpriseApplication.organisationId;
  if (!organisationId) throw new Error('bench: the commercial application made no organisation');
  const minted = await call(owner, 'POST', `/api/membership/enterprise/organisations/${organisationId}/keys`, { name: 'cluster bench' });
  const { token } = (await minted.json()) as { token: string };
  const before = await bench.balancer.served();
  const addresses = IP_REQUESTS.map((_, i) => `127.0.0.${11 + i}`);
  const statuses = (await Promise.all(addresses.map((address, i) => chatsFrom(bench, address, token, IP_REQUESTS[i]!)))).flat();
  const notOk = statuses.filter((status) => status !== 200);
  const total = IP_REQUESTS.reduce((a, b) => a + b, 0);
  // Counted in Redis by whichever instance authenticated each request (a request refused after that, e.g. a
  // 503 on an overloaded machine, still connected), flushed to PostgreSQL every half second.
  const counts = await until(
    async () => {
      const response = await call(owner, 'GET', `/api/membership/enterprise/organisations/${organisationId}/connections`);
      const { connections } = (await response.json()) as { connections: { ip: string; requestCount: number }[] };
      const byIp = new Map(connections.map((c) => [c.ip, c.requestCount]));
      return [...byIp.values()].reduce((a, b) => a + b, 0) >= total ? byIp : undefined;
    },
    10_000,
    200,
  );
  const got = addresses.map((address) => counts?.get(address) ?? 0);
  const ok = got.every((n, i) => n === IP_REQUESTS[i]) && counts?.size === addresses.length;
  return [
    {
      check: 'connecting-IP counts summed across instances',
      ok,
      result: `${addresses.length} addresses sent ${IP_REQUESTS.join('/')} (${statuses.length - notOk.length} answered 200${notOk.length > 0 ? `, ${notOk.join(', ')}` : ''}); console counts ${got.join('/')}${counts && counts.size !== addresses.length ? ` and ${counts.size - addresses.length} other addresses` : ''}; per instance ${await spread(bench, before)}`,
    },
  ];
};

const REVOCATIONS = 5;
/** "At once": every instance refuses a revoked key within this long of the revocation's answer. */
const REVOCATION_LIMIT_MS = 1_000;

export const checkRevocation: Check = async (bench) => {
  const { instances } = bench.group;
  const times: number[] = [];
  let acceptedAfter = 0;
  for (let round = 0; round < REVOCATIONS; round++) {
    const via = instances[round % instances.length]!.origin;
    const owner = await person(bench, via, 'revoke');
    const key = await mintKey(owner);
    const models = (origin: string) => fetch(`${origin}/v1/models`, { headers: { authorization: `Bearer ${key.token}` } }).then(async (r) => (await r.arrayBuffer(), r.status));
    // Each instance has the key in its credential cache before it is revoked.
    for (const instance of instances) if ((await models(instance.origin)) !== 200) throw new Error('bench: a fresh key was refused');
    const revoked = await call(owner, 'DELETE', `/api/membership/auth/api-keys/${key.id}`);
    const answered = performance.now();
    if (!revoked.ok) throw new Error(`bench: revoking answered ${revoked.status}`);
    const refusedAt = await Promise.all(
      instances.map(async (instance) => {
        for (;;) {
          const status = await models(instance.origin);
          if (status === 401) return performance.now();
          acceptedAfter++;
          if (performance.now() - answered > 10_000) return Number.POSITIVE_INFINITY;
        }
      }),
    );
    times.push(Math.max(...refusedAt) - answered);
  }
  return [
    {
      check: `revocation seen everywhere (${REVOCATIONS} keys, each revoked on one instance)`,
      ok: times.every((t) => t <= REVOCATION_LIMIT_MS) && acceptedAfter === 0,
      result: `${acceptedAfter} requests accepted after the revocation answered; all three refused within ${times.map((t) => ms(t)).join(', ')} (the first request on each; limit ${REVOCATION_LIMIT_MS} ms)`,
    },
  ];
};

/** Instances still heartbeating (a dead one is forgotten once a sweeper has settled all it held). */
const liveInstances = (bench: Bench) => bench.redis.zcard('instances');

export function checkKill(rate: number, durationMs: number): Check {
  return async (bench) => {
    const victim = bench.group.instances.length - 1;
    const token = bench.group.headers.authorization!.slice('Bearer '.length);
    const startedAt = new Date();
    let killedAt = 0;
    const run = await load(bench, token, rate, durationMs, async () => {
      await sleep(durationMs * 0.4);
      await bench.group.kill(victim, 'SIGKILL');
      killedAt = performance.now();
    });
    const survivors = bench.group.instances.length - 1;
    const forgotten = await until(async () => ((await liveInstances(bench)) <= survivors ? performance.now() : undefined), 60_000, 100);
    const { rows } = await bench.db.query<{ request_id: string; status: string; payer_id: string }>('select request_id, status, payer_id from usage_ledger where request_id = any($1)', [run.ok]);
    const okRows = new Set(rows.filter((r) => r.status === 'ok').map((r) => r.request_id));
    const lost = run.ok.filter((id) => !okRows.has(id));
    const payer = rows[0]?.payer_id;
    const { rows: extra } = await bench.db.query<{ status: string; n: number; cost: string }>(
      'select status, count(*)::int as n, sum(cost_micros) as cost from usage_ledger where payer_id = $1 and created_at >= $2 and not (request_id = any($3)) group by status',
      [payer, startedAt, run.ok],
    );
    const { rows: doubled } = await bench.db.query<{ n: number }>('select count(*)::int as n from (select request_id from usage_ledger group by request_id having count(*) > 1) d');
    const failedStatuses = Object.entries(run.statuses).filter(([status]) => status !== '200');
    const pools = await poolsEqualLedger(bench);
    const check = spawnSync(process.execPath, [`${ROOT}/bin/svc.js`, 'ledger', 'check'], { env: { ...process.env, DATABASE_URL: bench.group.databaseUrl }, encoding: 'utf8' });
    const checkLine = check.stdout.trim().split('\n').pop() ?? check.stderr.trim();
    return [
      {
        check: 'one instance killed (SIGKILL) mid-load: ledger',
        ok: lost.length === 0 && doubled[0]!.n === 0 && forgotten !== undefined,
        result:
          `${run.ok.length} answered 200 (${Math.round(run.rps)} req/s, p99 ${ms(run.p99)}), ${failedStatuses.map(([s, n]) => `${n}× ${s}`).join(', ') || 'no other status'}, ${run.errors} connection errors; ` +
          `200s without their ledger row: ${lost.length}; rows twice: ${doubled[0]!.n}; rows for requests not answered 200: ${extra.map((r) => `${r.n} ${r.status} (${r.cost} µ)`).join(', ') || 'none'}; ` +
          `dead instance settled by a survivor's sweeper ${forgotten === undefined ? 'not within 60 s' : `${((forgotten - killedAt) / 1000).toFixed(1)} s after the kill`}`,
      },
      { check: 'afterwards: pools = ledger, rollups = ledger', ok: pools.ok && check.status === 0, result: `${pools.result}; \`svc ledger check\`: ${checkLine}` },
    ];
  };
}

/** Every payer's fast day, week and month counters equal what the ledger billed in those windows (leases returned once idle). */
async function poolsEqualLedger(bench: Bench): Promise<{ ok: boolean; result: string }> {
  const current = windows();
  const compare = async () => {
    const { rows } = await bench.db.query<{ payer_id: string; day: string; week: string; month: string }>(
      `select payer_id, coalesce(sum(cost_micros) filter (where created_at >= $1), 0) as day, coalesce(sum(cost_micros) filter (where created_at >= $2), 0) as week,
              coalesce(sum(cost_micros) filter (where created_at >= $3), 0) as month from usage_ledger group by payer_id`,
      [current.day.startsAt, current.week.startsAt, current.month.startsAt],
    );
    const differ: string[] = [];
    for (const row of rows) {
      for (const window of ['day', 'week', 'month'] as const) {
        const counter = await pool(bench, row.payer_id, window);
        if (counter !== Number(row[window])) differ.push(`${row.payer_id.slice(0, 8)} ${window}: pool ${counter} ≠ ledger ${row[window]}`);
      }
    }
    return { payers: rows.length, differ };
  };
  const settled = await until(async () => {
    const result = await compare();
    return result.differ.length === 0 ? result : undefined;
  }, 15_000, 500);
  const result = settled ?? (await compare());
  return { ok: result.differ.length === 0, result: result.differ.length === 0 ? `every pool counter (${result.payers} payers × day/week/month) equals the ledger` : result.differ.slice(0, 3).join('; ') };
}
