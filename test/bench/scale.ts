/**
 * `npm run bench -- --instances=N` (or `--instances=1,2,4`): the scale-out number. For each N, N svc
 * processes share one PostgreSQL database and one Redis (one key prefix, one member and key); the load
 * generator runs S3's closed loop (64 connections, the 1.2 KB request) with a round-robin of its own over
 * the N instances — no proxy in between — and reports total and per-instance req/s, svc's CPU per
 * request, and the ledger check (ledger tokens == upstream tokens, rows == upstream requests).
 *
 * The ceiling on a small machine: every svc shares the cores not used by the load generator and the
 * upstream (one core on a 2-core machine), and PostgreSQL and Redis run there too, so N > 1 measures the
 * cost of N processes on one core rather than added capacity. On a machine with spare cores each
 * instance is pinned to its own. `--instances-of=passthrough` runs the same with N bare passthroughs
 * (no ledger, nothing shared): the control, which tells the machine's share of that cost from svc's.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { closedLoopRoundRobin } from './load.ts';
import { sampleProc } from './procs.ts';
import { median } from './report.ts';
import { plainBody } from './scenarios.ts';
import { startSvcGroup, type LedgerCheck, type SvcOptions } from './svc.ts';
import { quietStats, startPassthrough, statsDelta, sutCores, type System, type Upstream, type UpstreamStats } from './systems.ts';

export interface ScaleOptions {
  counts: number[];
  quick: boolean;
  rounds: number;
  connections: number;
  durationMs: number;
  upstream: Upstream;
  outFile: string;
  logOf: (name: string) => string;
  svc: SvcOptions;
  /** What runs N times: svc, or the bare passthrough as the control. */
  system: 'svc' | 'passthrough';
  say: (text: string) => void;
}

/** N instances of one system; `ledgerCheck` null for the passthrough, which keeps none. */
interface Group {
  instances: { origin: string; pid: number }[];
  headers: Record<string, string>;
  ledgerCheck: ((emitted: UpstreamStats) => Promise<LedgerCheck>) | null;
  stop(): Promise<void>;
}

interface ScaleResult {
  instances: number;
  rps: number;
  perInstanceRps: number[];
  errors: number;
  cpuMsPerReq: number;
  ledger: LedgerCheck | null;
}

/** Warm-up per instance, full and `--quick`. */
const WARMUP_MS = 5000;
const WARMUP_QUICK_MS = 1500;

export async function runScale(options: ScaleOptions): Promise<boolean> {
  const { upstream, say } = options;
  const results: ScaleResult[] = [];
  await upstream.setScript({ latencyMs: 0 });
  for (const count of options.counts) {
    const group = await startGroup(options, count);
    try {
      say(`instances=${count}: ${group.instances.map((instance) => `pid ${instance.pid}`).join(', ')}`);
      const targets = group.instances.map((instance) => ({ origin: instance.origin, path: '/v1/chat/completions', headers: group.headers }));
      const before = await upstream.stats();
      // Warm-up (JIT, connections, caches, lease sizes) — billed and counted like the rest. Per instance:
      // one svc reaches its steady rate after ~4 s of this load (~12,000 requests), and N instances share
      // the load, so each takes N times as long. With 1 s for every N, the N > 1 rows were measured cold.
      await closedLoopRoundRobin(targets, plainBody, options.connections, count * (options.quick ? WARMUP_QUICK_MS : WARMUP_MS));
      const rounds: { rps: number; perTarget: number[]; errors: number; cpuMsPerReq: number }[] = [];
      for (let round = 0; round < options.rounds; round++) {
        const cpuBefore = await Promise.all(group.instances.map((instance) => sampleProc(instance.pid)));
        const r = await closedLoopRoundRobin(targets, plainBody, options.connections, options.durationMs);
        const cpuAfter = await Promise.all(group.instances.map((instance) => sampleProc(instance.pid)));
        const cpuMs = cpuAfter.reduce((sum, sample, i) => sum + sample.cpuMs - cpuBefore[i]!.cpuMs, 0);
        rounds.push({ rps: r.rps, perTarget: r.perTarget.map((t) => t.rps), errors: r.errors, cpuMsPerReq: cpuMs / Math.max(1, r.ok) });
        say(`  round ${round + 1}/${options.rounds}: ${Math.round(r.rps)} req/s (${r.perTarget.map((t) => Math.round(t.rps)).join(' + ')}), ${r.errors} errors`);
      }
      const emitted = statsDelta(before, await quietStats(upstream));
      const ledger = group.ledgerCheck ? await group.ledgerCheck(emitted) : null;
      results.push({
        instances: count,
        rps: median(rounds.map((r) => r.rps)),
        perInstanceRps: group.instances.map((_, i) => median(rounds.map((r) => r.perTarget[i]!))),
        errors: rounds.reduce((sum, r) => sum + r.errors, 0),
        cpuMsPerReq: median(rounds.map((r) => r.cpuMsPerReq)),
        ledger,
      });
      if (ledger) say(`  ${ledger.ok ? 'MET   ' : 'MISSED'}  ledger: ${ledger.message}`);
    } finally {
      await group.stop();
    }
  }
  say('');
  say(table(results));
  writeFileSync(options.outFile, JSON.stringify({ mode: 'instances', system: options.system, quick: options.quick, connections: options.connections, durationMs: options.durationMs, rounds: options.rounds, results }, null, 2));
  say(`bench: wrote ${options.outFile}`);
  return results.every((r) => r.ledger === null || r.ledger.ok);
}

async function startGroup(options: ScaleOptions, count: number): Promise<Group> {
  const { upstream } = options;
  if (options.system === 'svc') return startSvcGroup(upstream, count, (i) => options.logOf(`svc-n${count}-${i + 1}`), options.svc);
  const cores = sutCores();
  const systems: System[] = [];
  const stop = async () => {
    await Promise.all(systems.map((system) => system.stop()));
  };
  try {
    for (let i = 0; i < count; i++) systems.push(await startPassthrough(upstream, options.logOf(`passthrough-n${count}-${i + 1}`), cores[i % cores.length]));
  } catch (error) {
    await stop(); // the ones already started
    throw error;
  }
  return {
    instances: systems.map((system) => ({ origin: system.target(false).origin, pid: system.pid })),
    headers: systems[0]!.target(false).headers,
    ledgerCheck: null,
    stop,
  };
}

function table(results: ScaleResult[]): string {
  const rows = [
    ['instances', 'req/s total', 'req/s per instance', '× 1 instance', 'CPU ms/req', 'errors', 'ledger'],
    ...results.map((r) => [
      String(r.instances),
      Math.round(r.rps).toLocaleString('en-US'),
      r.perInstanceRps.map((v) => Math.round(v).toLocaleString('en-US')).join(' / '),
      results[0] ? (r.rps / results[0].rps).toFixed(2) : '—',
      r.cpuMsPerReq.toFixed(3),
      String(r.errors),
      r.ledger === null ? '—' : r.ledger.ok ? 'exact' : 'MISMATCH',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((cell, i) => (i === 0 || i === 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return lines.join('\n');
}

export const scaleOutFile = (dir: string, stamp: string) => resolve(dir, `${stamp}-instances.json`);
