/**
 * An A/B of two trees of svc in one run, rounds interleaved (A, B, B, A, A, B, …): on a shared VM the same
 * measurement drifts by ±15 % from one minute to the next, so two runs one after the other cannot show a
 * change of a few percent, while rounds taken side by side can.
 *
 *   git worktree add /tmp/base <ref> && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   node test/bench/ab.ts /tmp/base s3 [rounds=8]     # A = /tmp/base, B = this tree
 *   node test/bench/ab.ts . s3 --b-node-flags='--single-threaded-gc'   # one tree, B with other Node flags
 *   node test/bench/ab.ts . s4 --b-api=messages   # one tree, B through POST /v1/messages (the same request)
 *   node test/bench/ab.ts . s1 --b-api=responses  # one tree, B through POST /v1/responses (the same request)
 *   node test/bench/ab.ts . s1 --b-gateway=libraries   # one tree, B with Fastify's route + undici's Pool for chat
 *
 * `--a-gateway=` / `--b-gateway=` add `gateway` config to one side: `key=value,…` (e.g. `httpLayer=fastify`,
 * `upstreamClient=undici`), or `libraries` for both of those — svc's own lane and pool against the libraries
 * they replace (issue 47). In s1 each round also times the upstream directly, so svc's added p50 is reported.
 *
 * Scenarios: `s1` (one connection, 3,000 sequential requests: p50, p99 and svc's CPU per request), `s3` (64
 * connections for 3 s: req/s and CPU per request), `s4` (streams of 100 chunks, `--streams=100`: added
 * time to first token and CPU per 1,000 chunks; `--chunks=4` makes them short, to weigh what a stream's
 * start and end cost). CPU is the svc process's, all threads, from /proc; in s1 and s3 also PostgreSQL's, all
 * its processes (the ledger's writes; the load generator, the upstream and Redis write nothing to it). Both
 * trees share one scripted upstream, database server and Redis; each gets its own database and key prefix.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { closedLoop, sequential, streams } from './load.ts';
import { pinSelf, threadsCpuMs } from './procs.ts';
import { median } from './report.ts';
import { percentile, plainBody as plainChatBody, plainMessagesBody, plainResponsesBody, streamBody as streamChatBody, streamMessagesBody, streamResponsesBody } from './scenarios.ts';
import { LIBRARY_PATH, startSvc, type SvcSystem } from './svc.ts';
import { LOAD_CORE, startUpstream } from './systems.ts';

const [otherTree, scenario = 's3', roundsArg = '8'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const streamCount = Number(process.argv.find((arg) => arg.startsWith('--streams='))?.slice('--streams='.length) ?? 100);
const chunks = Number(process.argv.find((arg) => arg.startsWith('--chunks='))?.slice('--chunks='.length) ?? 100);
if (!otherTree || !['s1', 's3', 's4'].includes(scenario)) throw new Error('usage: node test/bench/ab.ts <other tree> <s1|s3|s4> [rounds] [--streams=100] [--chunks=100]');
const rounds = Number(roundsArg);
/** Node flags added to one side's svc (`--a-node-flags=`, `--b-node-flags=`, space-separated): an A/B of flags. */
const nodeFlags = (side: 'a' | 'b') => process.argv.find((arg) => arg.startsWith(`--${side}-node-flags=`))?.slice(`--${side}-node-flags=`.length).split(' ').filter(Boolean) ?? [];
/** `gateway` config for one side (`--a-gateway=`, `--b-gateway=`): `libraries`, or `key=value` pairs separated by commas. */
const gateway = (side: 'a' | 'b'): Record<string, string> => {
  const value = process.argv.find((arg) => arg.startsWith(`--${side}-gateway=`))?.slice(`--${side}-gateway=`.length);
  if (value === undefined) return {};
  if (value === 'libraries') return { ...LIBRARY_PATH };
  return Object.fromEntries(value.split(',').map((pair) => pair.split('=') as [string, string]));
};
/** The API one side is called through (`--a-api=`, `--b-api=`): `chat` (default), `messages` (Anthropic) or `responses` (OpenAI), the same request each time. */
const api = (side: 'a' | 'b') => (['messages', 'responses'] as const).find((name) => process.argv.includes(`--${side}-api=${name}`)) ?? 'chat';
const bodies = {
  chat: { path: '/v1/chat/completions', plain: plainChatBody, stream: streamChatBody },
  messages: { path: '/v1/messages', plain: plainMessagesBody, stream: streamMessagesBody },
  responses: { path: '/v1/responses', plain: plainResponsesBody, stream: streamResponsesBody },
};

/**
 * CPU milliseconds of each PostgreSQL process so far (backends, WAL writer, autovacuum), by pid: only one
 * side runs at a time, so what they spend in a round is that side's ledger work (`postgresSince`).
 */
function postgresMs(comm = 'postgres'): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8') !== `${comm}\n`) continue;
      // Only the Redis both sides use (others on the machine serve other work).
      if (comm === 'redis-server' && !readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(`:${new URL(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379').port || 6379}`)) continue;
      byPid.set(Number(entry), threadsCpuMs(Number(entry)));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return byPid;
}

/** What PostgreSQL spent since `before`; a process that exited in between takes its share with it. */
function postgresSince(before: Map<number, number>, comm = 'postgres'): number {
  let total = 0;
  for (const [pid, ms] of postgresMs(comm)) total += ms - (before.get(pid) ?? 0);
  return total;
}

pinSelf(LOAD_CORE);
// Each tree's svc writes its bench config there.
mkdirSync(resolve(otherTree, 'bench-results'), { recursive: true });
const other = (await import(resolve(otherTree, 'test/bench/svc.ts'))) as { startSvc: typeof startSvc };
const upstream = await startUpstream('/dev/null');
const systems: Record<'A' | 'B', SvcSystem> = {
  A: await other.startSvc(upstream, '/dev/null', { nodeFlags: nodeFlags('a'), gateway: gateway('a') }),
  B: await startSvc(upstream, '/dev/null', { nodeFlags: nodeFlags('b'), gateway: gateway('b') }),
};
const direct = { origin: upstream.origin, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } };

// Redis's CPU (redis-server, all of it) is the whole server's: on a Redis other work shares, read it as an upper bound.
const names = { s1: ['p50 µs', 'added p50 µs', 'p99 µs', 'CPU µs/request', 'PostgreSQL CPU µs/request', 'Redis CPU µs/request'], s3: ['req/s', 'CPU µs/request', 'PostgreSQL CPU µs/request', 'Redis CPU µs/request'], s4: ['TTFT p50 µs', 'CPU ms/1,000 chunks'] }[scenario]!;

async function round(side: 'A' | 'B'): Promise<number[]> {
  const system = systems[side];
  const through = bodies[api(side === 'A' ? 'a' : 'b')];
  const target = (stream: boolean) => ({ ...system.target(stream), path: through.path });
  const { plain: plainBody, stream: streamBody } = through;
  const before = threadsCpuMs(system.pid);
  const postgresBefore = scenario === 's4' ? new Map<number, number>() : postgresMs();
  const redisBefore = scenario === 's4' ? new Map<number, number>() : postgresMs('redis-server');
  if (scenario === 's1') {
    await upstream.setScript({ latencyMs: 0 });
    const r = await sequential(target(false), plainBody, 3000, 100);
    const cpu = ((threadsCpuMs(system.pid) - before) / 3100) * 1000;
    const postgres = (postgresSince(postgresBefore) / 3100) * 1000;
    const redis = (postgresSince(redisBefore, 'redis-server') / 3100) * 1000;
    // The upstream on its own, right after: what svc adds is the difference within the round.
    const bare = percentile((await sequential(direct, plainChatBody, 3000, 100)).latenciesUs, 50);
    const p50 = percentile(r.latenciesUs, 50);
    return [p50, p50 - bare, percentile(r.latenciesUs, 99), cpu, postgres, redis];
  }
  if (scenario === 's3') {
    await upstream.setScript({ latencyMs: 0 });
    const r = await closedLoop(target(false), plainBody, 64, 3000);
    const requests = Math.max(1, r.ok);
    return [r.rps, ((threadsCpuMs(system.pid) - before) / requests) * 1000, (postgresSince(postgresBefore) / requests) * 1000, (postgresSince(redisBefore, 'redis-server') / requests) * 1000];
  }
  await upstream.setScript({ latencyMs: 0, chunks, firstChunkDelayMs: 50, intervalMs: 20 });
  // About 4 s of streams per round, whatever their length.
  const perWorker = Math.max(2, Math.round(4000 / (50 + chunks * 20)));
  const r = await streams(target(true), streamBody, streamCount, chunks, { perWorker, staggerMs: 50 + chunks * 20, skipFirst: true });
  return [percentile(r.ttftUs, 50), ((threadsCpuMs(system.pid) - before) * 1000) / Math.max(1, r.chunksRelayed)];
}

const results: Record<'A' | 'B', number[][]> = { A: [], B: [] };
try {
  await round('A'); // warm-up, not counted
  await round('B');
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const);
    for (const name of order) results[name].push(await round(name));
  }
} finally {
  await systems.A.stop();
  await systems.B.stop();
  await upstream.stop();
}
const flagged = (side: 'a' | 'b') =>
  (nodeFlags(side).length > 0 ? ` with ${nodeFlags(side).join(' ')}` : '') +
  (api(side) === 'chat' ? '' : ` through ${bodies[api(side)].path}`) +
  (Object.keys(gateway(side)).length > 0 ? ` with gateway ${JSON.stringify(gateway(side))}` : '');
process.stdout.write(`A/B ${scenario}, ${rounds} rounds each, interleaved; A = ${otherTree}${flagged('a')}, B = this tree${flagged('b')}\n`);
for (const name of ['A', 'B'] as const) {
  const columns = names.map((label, j) => `${label} ${median(results[name].map((r) => r[j]!)).toFixed(1)} [${results[name].map((r) => r[j]!.toFixed(0)).join(' ')}]`);
  process.stdout.write(`${name}  ${columns.join('   ')}\n`);
}
