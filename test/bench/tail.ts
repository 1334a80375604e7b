/**
 * Where svc's tail under a steady rate goes (issue 50 item 4). S2's open loop (a fixed rate against a 200 ms
 * upstream) run against `direct`, the bare passthrough and svc in rotating order, round after round; each
 * system under test carries `tail-probe.ts`, so every slow request is laid beside what happened inside the
 * process while it waited: GC pauses, event-loop stalls, PostgreSQL statements (the ledger's COPY: a
 * settlement round) and Redis commands (admission, leases, pool settlement).
 *
 *   node test/bench/tail.ts [rounds=4] [--rates=1000,2000] [--seconds=5] [--a=/tmp/base]
 *
 * `--a=<tree>`: svc of another checkout too (`svc-a`), interleaved with this tree's — an A/B of a change.
 * Per round and rate it prints each system's added p99 (its p99 minus direct's in the same round) and svc's
 * over the passthrough's; then, for the requests above each system's p99, the share that overlapped each
 * kind of event (and the longest of each), and the events' totals.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fixedRate } from './load.ts';
import pg from 'pg';
import { pinSelf, threadsCpuMs } from './procs.ts';
import { median } from './report.ts';
import { percentile, plainBody } from './scenarios.ts';
import { startSvc } from './svc.ts';
import { LOAD_CORE, ROOT, directSystem, quietStats, startPassthrough, startUpstream, type System } from './systems.ts';

const args = process.argv.slice(2);
const option = (name: string) => args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const rounds = Number(args.find((arg) => !arg.startsWith('--')) ?? 4);
const rates = (option('rates') ?? '1000,2000').split(',').map(Number);
const durationMs = Number(option('seconds') ?? 5) * 1000;
const otherTree = option('a');
const LATENCY_MS = 200;
const PG_ADMIN = process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The kinds of event a slow request is checked against. */
const KINDS: Record<string, (e: Event) => boolean> = {
  'gc scavenge': (e) => e.k === 'gc' && e.kind === 1,
  'gc mark-compact': (e) => e.k === 'gc' && e.kind !== 1,
  'stall ≥ 5 ms': (e) => e.k === 'stall' && e.d >= 5,
  'pg copy': (e) => e.k === 'pg' && e.q === 'copy',
  'pg other': (e) => e.k === 'pg' && e.q !== 'copy',
  'redis ≥ 2 ms': (e) => e.k === 'redis' && e.d >= 2,
};

const dir = resolve(ROOT, 'bench-results', `tail-${new Date().toISOString().replace(/[:.]/g, '-')}`);
mkdirSync(dir, { recursive: true });
const probe = resolve(import.meta.dirname, 'tail-probe.ts');
const probeFile = (name: string) => resolve(dir, `${name}.probe.jsonl`);
/** Runs node under `env` with the probe's file set: `nodeCommand` puts node's path and the script after it. */
const probed = (name: string) => ['env', `SVC_TAIL_PROBE=${probeFile(name)}`];

pinSelf(LOAD_CORE);
const upstream = await startUpstream(resolve(dir, 'upstream.log'));
await upstream.setScript({ latencyMs: LATENCY_MS });
const systems: System[] = [directSystem(upstream)];
try {
  systems.push(await startPassthrough(upstream, resolve(dir, 'passthrough.log'), undefined, [...probed('passthrough'), `NODE_OPTIONS=--import=${probe}`]));
  if (otherTree) {
    const other = (await import(resolve(otherTree, 'test/bench/svc.ts'))) as { startSvc: typeof startSvc };
    mkdirSync(resolve(otherTree, 'bench-results'), { recursive: true });
    const a = await other.startSvc(upstream, resolve(dir, 'svc-a.log'), { wrap: probed('svc-a'), nodeFlags: ['--import', probe] });
    systems.push({ ...a, name: 'svc-a' as System['name'] });
  }
  systems.push(await startSvc(upstream, resolve(dir, 'svc.log'), { wrap: probed('svc'), nodeFlags: ['--import', probe] }));
  say(`tail: ${rounds} rounds at ${rates.join(', ')} req/s for ${durationMs / 1000} s, upstream ${LATENCY_MS} ms; ${systems.map((s) => `${s.name} (pid ${s.pid})`).join(', ')}; probe files in ${dir}`);

  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  /** CPU ms so far of the system's process and of PostgreSQL's backends serving its database (svc's ledger, settings, keys). */
  const cpu = async (system: System): Promise<{ own: number; postgres: Map<number, number> }> => {
    const postgres = new Map<number, number>();
    const database = system.name.startsWith('svc') ? databaseOf(system.pid) : null;
    if (database) {
      for (const { pid } of (await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database])).rows) {
        try {
          postgres.set(pid, threadsCpuMs(pid));
        } catch {
          // gone since
        }
      }
    }
    return { own: threadsCpuMs(system.pid), postgres };
  };
  const cpuUs: Record<string, Record<number, { own: number[]; postgres: number[] }>> = {};
  const p99s: Record<string, Record<number, number[]>> = {};
  const slow: Record<string, Record<number, Overlap[]>> = {};
  for (let round = 0; round < rounds; round++) {
    for (const rate of rates) {
      const order = systems.map((_, i) => systems[(i + round) % systems.length]!);
      const p99 = new Map<string, number>();
      for (const system of order) {
        const file = probeFile(system.name);
        if (existsSync(file)) rmSync(file);
        const before = await cpu(system);
        const r = await fixedRate(system.target(false), plainBody, rate, durationMs);
        await quietStats(upstream);
        const after = await cpu(system);
        let postgresMs = 0;
        for (const [pid, ms] of after.postgres) postgresMs += ms - (before.postgres.get(pid) ?? ms);
        const perRequest = { own: ((after.own - before.own) * 1000) / r.sent, postgres: (postgresMs * 1000) / r.sent };
        const spent = ((cpuUs[system.name] ??= {})[rate] ??= { own: [], postgres: [] });
        spent.own.push(perRequest.own);
        spent.postgres.push(perRequest.postgres);
        await new Promise((r) => setTimeout(r, 400)); // the probe's last lines written
        const value = percentile(r.latenciesUs, 99) / 1000;
        p99.set(system.name, value);
        ((p99s[system.name] ??= {})[rate] ??= []).push(value);
        if (system.name !== 'direct') ((slow[system.name] ??= {})[rate] ??= []).push(overlap(r.latenciesUs, r.dueMs, value, readProbe(file)));
        say(`round ${round + 1} ${String(rate).padStart(4)}/s ${system.name.padEnd(11)} p50 ${(percentile(r.latenciesUs, 50) / 1000).toFixed(1)} p99 ${value.toFixed(1)} ms, ${r.ok}/${r.sent} ok; CPU µs a request: own ${perRequest.own.toFixed(0)}, PostgreSQL ${perRequest.postgres.toFixed(0)}`);
      }
      const added = (name: string) => p99.get(name)! - p99.get('direct')!;
      say(`round ${round + 1} ${rate}/s added p99: ${systems.slice(1).map((s) => `${s.name} +${added(s.name).toFixed(1)}`).join(', ')} ms; svc ÷ passthrough ${(added('svc') / added('passthrough')).toFixed(2)}`);
    }
  }

  say('\nsummary (median over rounds; spread min–max):');
  for (const rate of rates) {
    const added = (name: string) => p99s[name]![rate]!.map((v, i) => v - p99s.direct![rate]![i]!);
    const ratios = added('svc').map((v, i) => v / added('passthrough')[i]!);
    const span = (values: number[]) => `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`;
    say(`${rate}/s added p99 ms: ${systems.slice(1).map((s) => `${s.name} ${span(added(s.name))}`).join(', ')}; svc ÷ passthrough ${span(ratios)} [${ratios.map((r) => r.toFixed(2)).join(' ')}]`);
    const cpuOf = (name: string) => `CPU µs a request: own ${span(cpuUs[name]![rate]!.own)}, PostgreSQL ${span(cpuUs[name]![rate]!.postgres)}`;
    for (const system of systems) say(`  ${system.name}: ${cpuOf(system.name)}${system.name === 'direct' ? ' (own: the upstream)' : `\n    ${describe(slow[system.name]![rate]!)}`}`);
  }
  await admin.end();
} finally {
  for (const system of systems.reverse()) await system.stop().catch(() => undefined);
  await upstream.stop();
}

/** The database a system's process was started on (its `DATABASE_URL`), or null. */
function databaseOf(pid: number): string | null {
  const url = readFileSync(`/proc/${pid}/environ`, 'utf8')
    .split('\0')
    .find((entry) => entry.startsWith('DATABASE_URL='));
  return url ? new URL(url.slice('DATABASE_URL='.length)).pathname.slice(1) : null;
}

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

interface Event {
  k: 'gc' | 'stall' | 'req' | 'pg' | 'redis';
  t: number;
  d: number;
  kind?: number;
  q?: string;
  c?: string;
}

function readProbe(file: string): Event[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Event);
}

/** For one run: its slow requests (above its p99) and what overlapped them, and the run's event totals. */
interface Overlap {
  slow: number;
  /** Slow requests due in the run's first second (new connections are opened then). */
  firstSecond: number;
  /** Per kind of event: slow requests it overlapped, and the longest such event (ms). */
  hits: Record<string, { requests: number; longestMs: number }>;
  /** Per kind: count, total ms, longest ms over the whole run. */
  totals: Record<string, { count: number; totalMs: number; longestMs: number }>;
  /** svc's own time per request (request event → response finish) p99, ms. */
  insideP99Ms: number;
}

function overlap(latenciesUs: number[], dueMs: number[], p99Ms: number, events: Event[]): Overlap {
  const start = Math.min(...dueMs);
  const result: Overlap = { slow: 0, firstSecond: 0, hits: {}, totals: {}, insideP99Ms: percentile(events.filter((e) => e.k === 'req').map((e) => e.d), 99) };
  for (const [name, match] of Object.entries(KINDS)) {
    const list = events.filter(match);
    result.totals[name] = { count: list.length, totalMs: list.reduce((sum, e) => sum + e.d, 0), longestMs: Math.max(0, ...list.map((e) => e.d)) };
    result.hits[name] = { requests: 0, longestMs: 0 };
  }
  for (let i = 0; i < latenciesUs.length; i++) {
    const ms = latenciesUs[i]! / 1000;
    if (ms < p99Ms) continue;
    result.slow++;
    const from = dueMs[i]!;
    const to = from + ms;
    if (from - start < 1000) result.firstSecond++;
    for (const [name, match] of Object.entries(KINDS)) {
      const hit = events.filter((e) => match(e) && e.t < to && e.t + e.d > from);
      if (hit.length === 0) continue;
      result.hits[name]!.requests++;
      result.hits[name]!.longestMs = Math.max(result.hits[name]!.longestMs, ...hit.map((e) => e.d));
    }
  }
  return result;
}

function describe(runs: Overlap[]): string {
  const sum = (f: (o: Overlap) => number) => runs.reduce((total, o) => total + f(o), 0);
  const slow = sum((o) => o.slow);
  const parts = [`${slow} requests above p99, ${sum((o) => o.firstSecond)} of them due in a run's first second; inside-process p99 ${runs.map((o) => o.insideP99Ms.toFixed(1)).join(' ')} ms`];
  for (const name of Object.keys(KINDS)) {
    const hit = sum((o) => o.hits[name]!.requests);
    const longest = Math.max(...runs.map((o) => o.hits[name]!.longestMs));
    const count = sum((o) => o.totals[name]!.count);
    const total = sum((o) => o.totals[name]!.totalMs);
    const runLongest = Math.max(...runs.map((o) => o.totals[name]!.longestMs));
    if (count === 0) continue;
    parts.push(`${name}: ${count} in all (${(total / runs.length).toFixed(0)} ms a run, longest ${runLongest.toFixed(1)}), overlapping ${hit} slow (${((hit * 100) / Math.max(1, slow)).toFixed(0)} %, longest such ${longest.toFixed(1)} ms)`);
  }
  return parts.join('\n    ');
}
