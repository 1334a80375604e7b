/**
 * `npm run bench:data [-- --scale=0.01] [--runs=50] [--reuse] [--no-explain]` (issue 50 item 1): loads the
 * database (load.ts), starts svc on it, and measures p50/p95 of what staff and members do (measure.ts), warm,
 * one request at a time. Prints a table and writes bench-results/data-<scale>-<time>.json.
 *
 *   --scale=S        1 = the sizes (1,000,000 accounts, 20,000,000 ledger rows); 0.01 for a quick run
 *   --runs=N         timed requests per operation (default 50, after 5 warm-up requests)
 *   --database=NAME  the database to (re)create (default svc_bench_data)
 *   --database-url=  the server to use (default TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres)
 *   --reuse          measure the database a previous run loaded (same name), without loading again
 *   --no-explain     skip the plan pass (below)
 *   --only=A,B       measure only the operations whose name contains A or B (a quicker look at a few)
 *   --pg-log=PATH    the PostgreSQL server log (default /var/log/postgresql/postgresql-<major>-main.log)
 *
 * Beside wall-clock p50/p95 it reports the CPU time each request cost svc and PostgreSQL (its backends for
 * this database), from /proc/<pid>/schedstat over the timed runs: on a shared machine the wall clock mostly
 * measures the wait for a core, the CPU time what the operation itself needs.
 *
 * The plan pass: the database gets `auto_explain` (session_preload_libraries, set on this database only,
 * undone afterwards), a fresh svc runs each operation once, and the plans of its statements are read from the
 * server log — the plans of the SQL the real service code sends, with ANALYZE and BUFFERS. It needs the log to
 * be readable (a local server); without it the pass is skipped and says so.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import { ROOT } from '../systems.ts';
import { databaseUrlOf, load, type LoadResult } from './load.ts';
import { operations, type Operation } from './measure.ts';
import { migrate, startSvc } from './svc.ts';

const flags = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, '').split('=');
    return [key!, value ?? 'true'] as const;
  }),
);
const scale = Number(flags.get('scale') ?? 1);
const runs = Number(flags.get('runs') ?? 50);
const database = flags.get('database') ?? 'svc_bench_data';
const adminUrl = flags.get('database-url') ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
if (!(scale > 0 && scale <= 1) || !(runs >= 1)) {
  process.stderr.write('usage: npm run bench:data -- [--scale=0.001…1] [--runs=N] [--reuse] [--no-explain] [--database=NAME] [--database-url=URL]\n');
  process.exit(2);
}

const TARGET_MS = 50;
const outDir = resolve(ROOT, 'bench-results');
mkdirSync(outDir, { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');

let loaded: LoadResult;
if (flags.has('reuse')) {
  const db = new pg.Client({ connectionString: databaseUrlOf(adminUrl, database) });
  await db.connect();
  const { rows } = await db.query<{ c: string | null }>(`select shobj_description(oid, 'pg_database') as c from pg_database where datname = current_database()`);
  await db.end();
  const previous = rows[0]?.c ? (JSON.parse(rows[0].c) as LoadResult) : null;
  if (!previous) throw new Error(`${database} has no load recorded: run without --reuse first`);
  loaded = previous;
  process.stdout.write(`reusing ${database} (scale ${JSON.stringify(previous.sizes)})\n`);
} else {
  process.stdout.write(`loading ${database}\n`);
  loaded = await load({ adminUrl, database, scale, migrate });
  const db = new pg.Client({ connectionString: loaded.databaseUrl });
  await db.connect();
  await db.query(`comment on database "${database}" is ${pg.escapeLiteral(JSON.stringify(loaded))}`);
  await db.end();
}

const svcLog = resolve(outDir, `data-svc-${stamp}.log`);
const svc = await startSvc(loaded.databaseUrl, svcLog);
interface Figures {
  name: string;
  who: string;
  rows: number;
  p50: number;
  p95: number;
  max: number;
  /** CPU ms per request: svc's process, and PostgreSQL's backends serving this database. */
  svcCpuMs: number | null;
  pgCpuMs: number | null;
}

/** Nanoseconds each process has run on a CPU, by pid; null where /proc cannot tell (not Linux, another host). */
function cpuNs(pids: number[]): Map<number, number> | null {
  const ns = new Map<number, number>();
  for (const pid of pids) {
    try {
      ns.set(pid, Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // A backend that ended meanwhile, or a server on another host: its time is not known here.
    }
  }
  return pids.length > 0 && ns.size === 0 ? null : ns;
}

/** CPU ms per run between two readings; a process seen only in the second started meanwhile (all of its time counts). */
function cpuMsPerRun(before: Map<number, number> | null, after: Map<number, number> | null, runs: number): number | null {
  if (!before || !after) return null;
  let ns = 0;
  for (const [pid, at] of after) ns += at - (before.get(pid) ?? 0);
  return round(ns / 1e6 / runs);
}

/**
 * Waits until svc is idle: at start it reconciles every pool counter with the ledger (sweeper.ts, seconds
 * of CPU on this data, again every 5 minutes), and CPU spent on that inside an operation's window would be
 * counted as the operation's. Idle: under 20 ms of CPU in a second, twice running (at most 3 minutes).
 */
async function settle(pid: number): Promise<number> {
  const started = performance.now();
  let quiet = 0;
  let last = cpuNs([pid])?.get(pid);
  while (quiet < 2 && last !== undefined && performance.now() - started < 180_000) {
    await new Promise((done) => setTimeout(done, 1000));
    const now = cpuNs([pid])?.get(pid);
    if (now === undefined) break;
    quiet = now - last < 20e6 ? quiet + 1 : 0;
    last = now;
  }
  return Math.round((performance.now() - started) / 1000);
}

process.stdout.write(`svc idle after ${await settle(svc.pid)} s\n`);
const results: Figures[] = [];
let ops: Operation[];
const backends = new pg.Client({ connectionString: loaded.databaseUrl });
await backends.connect();
try {
  const only = flags.get('only')?.split(',');
  ops = (await operations(svc.origin, loaded.databaseUrl, loaded.sizes)).filter((op) => !only || only.some((part) => op.name.includes(part)));
  for (const op of ops) {
    let rows = 0;
    for (let i = 0; i < 5; i++) rows = await op.run();
    const pgPids = async () => (await backends.query<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`)).rows.map((row) => row.pid);
    const svcBefore = cpuNs([svc.pid]);
    const pgBefore = cpuNs(await pgPids());
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      await op.run();
      times.push(performance.now() - started);
    }
    const svcAfter = cpuNs([svc.pid]);
    const pgAfter = cpuNs(await pgPids());
    times.sort((a, b) => a - b);
    const q = (p: number) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]!;
    const figures = { name: op.name, who: op.who, rows, p50: round(q(0.5)), p95: round(q(0.95)), max: round(times.at(-1)!), svcCpuMs: cpuMsPerRun(svcBefore, svcAfter, runs), pgCpuMs: cpuMsPerRun(pgBefore, pgAfter, runs) };
    results.push(figures);
    process.stdout.write(`  ${op.name}: p50 ${figures.p50} ms, p95 ${figures.p95} ms, CPU svc ${figures.svcCpuMs} + PostgreSQL ${figures.pgCpuMs} ms (${rows} rows)\n`);
  }
} finally {
  await backends.end();
  await svc.stop();
}

const plans = flags.has('no-explain') ? { skipped: '--no-explain' } : await explainPass(loaded, ops!.map((op) => op.name));

const width = Math.max(...results.map((r) => r.name.length));
process.stdout.write(`\nData at scale ${JSON.stringify(loaded.sizes)}; ${runs} warm runs each; target p95 ≤ ${TARGET_MS} ms\n`);
process.stdout.write(`${'operation'.padEnd(width)}  ${'p50 ms'.padStart(8)}  ${'p95 ms'.padStart(8)}  ${'svc CPU'.padStart(8)}  ${'pg CPU'.padStart(8)}  rows  target\n`);
const cpu = (ms: number | null) => (ms === null ? '–' : ms.toFixed(2)).padStart(8);
for (const r of results) {
  process.stdout.write(`${r.name.padEnd(width)}  ${r.p50.toFixed(1).padStart(8)}  ${r.p95.toFixed(1).padStart(8)}  ${cpu(r.svcCpuMs)}  ${cpu(r.pgCpuMs)}  ${String(r.rows).padStart(4)}  ${r.p95 <= TARGET_MS ? 'met' : 'MISSED'}\n`);
}
const out = resolve(outDir, `data-${scale}-${stamp}.json`);
writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), scale, runs, sizes: loaded.sizes, load: { seconds: loaded.seconds, counts: loaded.counts }, targetMs: TARGET_MS, results, plans }, null, 2));
process.stdout.write(`\nwrote ${out}\n`);
process.exit(results.some((r) => r.rows === 0) ? 1 : 0);

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/**
 * Each operation once on a fresh svc with auto_explain on for this database: the statements it ran, slowest
 * first, each with its plan as PostgreSQL logged it.
 */
async function explainPass(result: LoadResult, names: string[]): Promise<Record<string, unknown>> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const major = (await admin.query<{ server_version_num: string }>(`show server_version_num`)).rows[0]!.server_version_num.slice(0, 2);
  const logPath = flags.get('pg-log') ?? `/var/log/postgresql/postgresql-${major}-main.log`;
  if (!existsSync(logPath)) {
    await admin.end();
    return { skipped: `no readable server log at ${logPath} (--pg-log=PATH)` };
  }
  const settings = [
    `session_preload_libraries = 'auto_explain'`,
    `auto_explain.log_min_duration = 0`,
    `auto_explain.log_analyze = on`,
    `auto_explain.log_buffers = on`,
    `auto_explain.log_timing = on`,
    `auto_explain.log_nested_statements = on`,
  ];
  for (const setting of settings) await admin.query(`alter database "${database}" set ${setting}`);
  const byOperation: Record<string, { ms: number; query: string; plan: string }[]> = {};
  try {
    const explained = await startSvc(result.databaseUrl, resolve(outDir, `data-svc-explain-${stamp}.log`));
    try {
      const list = await operations(explained.origin, result.databaseUrl, result.sizes);
      for (const op of list.filter((o) => names.includes(o.name))) {
        await op.run(); // warm: plans of a cold cache are not what staff see
        const from = statSync(logPath).size;
        await op.run();
        await new Promise((done) => setTimeout(done, 300));
        byOperation[op.name] = parsePlans(readFrom(logPath, from)).sort((a, b) => b.ms - a.ms);
      }
    } finally {
      await explained.stop();
    }
  } finally {
    await admin.query(`alter database "${database}" reset all`);
    await admin.end();
  }
  return { log: logPath, byOperation };
}

function readFrom(path: string, from: number): string {
  const size = statSync(path).size;
  const buffer = Buffer.alloc(Math.max(0, size - from));
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, from);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}

/** auto_explain's text entries: `duration: X ms  plan:` then `Query Text: …` and the indented plan. */
function parsePlans(text: string): { ms: number; query: string; plan: string }[] {
  const entries: { ms: number; query: string; plan: string }[] = [];
  const parts = text.split(/\n(?=\S)/);
  for (let i = 0; i < parts.length; i++) {
    const head = /LOG:\s+duration: ([\d.]+) ms\s+plan:/.exec(parts[i]!);
    if (!head) continue;
    const body = parts[i]!.slice(head.index + head[0].length);
    const match = /Query Text: ([\s\S]*?)\n(\s+\S[\s\S]*)$/.exec(body);
    const query = (match?.[1] ?? body).trim();
    // The statements svc runs for every request (session, account) are kept too: they are part of the answer.
    entries.push({ ms: Number(head[1]), query: query.slice(0, 2000), plan: (match?.[2] ?? '').replace(/^\t/gm, '').trimEnd() });
  }
  return entries;
}
