/**
 * `npm run bench -- --soak=10m [--soak-rate=40]`: one svc under a fixed, moderate open-loop rate for the
 * whole duration — alternately a plain request and a stream (20 chunks, 20 ms apart) — while svc samples
 * itself every 10 s (soak-sample.ts, preloaded with `--import`): RSS, V8 heap, event-loop lag and
 * open handles. Prints the samples as a table and a verdict: flat is the pass (after the first sample,
 * the last third of the run holds no more than the first third plus a margin), and the ledger check.
 */
import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Pool } from 'undici';
import { plainBody, streamBody } from './scenarios.ts';
import { startSvcGroup, type LedgerCheck, type SvcOptions } from './svc.ts';
import { quietStats, statsDelta, type Upstream } from './systems.ts';
import { median } from './report.ts';

export interface SoakOptions {
  durationMs: number;
  /** Requests per second, half of them streams. */
  rate: number;
  sampleMs: number;
  upstream: Upstream;
  log: string;
  outFile: string;
  svc: SvcOptions;
  say: (text: string) => void;
}

interface Sample {
  t: number;
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  handles: number;
  resources: Record<string, number>;
}

interface Interval {
  ok: number;
  failed: number;
}

const STREAM_SCRIPT = { latencyMs: 0, chunks: 20, firstChunkDelayMs: 50, intervalMs: 20 };

export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new Error(`bench: --soak wants a duration such as 10m, 90s or 1h, not ${JSON.stringify(text)}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(match[1]) * unit);
}

export async function runSoak(options: SoakOptions): Promise<boolean> {
  const { upstream, say } = options;
  // The start-up smoke request (max_tokens 16) under the default script; the soak's own script after it.
  await upstream.setScript({ latencyMs: 0 });
  const sampler = ['--import', resolve(import.meta.dirname, 'soak-sample.ts')];
  const group = await startSvcGroup(upstream, 1, () => options.log, { ...options.svc, nodeFlags: [...(options.svc.nodeFlags ?? []), ...sampler], env: { SVC_SOAK_SAMPLE_MS: String(options.sampleMs) } });
  await upstream.setScript(STREAM_SCRIPT);
  const instance = group.instances[0]!;
  say(`soak: svc pid ${instance.pid}, ${options.rate} req/s (half streams) for ${Math.round(options.durationMs / 1000)} s, sampled every ${options.sampleMs / 1000} s`);
  const before = await upstream.stats();
  const pool = new Pool(instance.origin, { connections: 1024, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const intervals: Interval[] = [];
  let current: Interval = { ok: 0, failed: 0 };
  const inflight = new Set<Promise<void>>();
  let read = 0;
  const samples: Sample[] = [];
  let printedHeader = false;
  let pending = '';
  const collect = () => {
    // Only what was appended since the last read (the log can grow large under info logging).
    const size = statSync(options.log).size;
    if (size <= read) return;
    const buffer = Buffer.alloc(size - read);
    const fd = openSync(options.log, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, read);
    } finally {
      closeSync(fd);
    }
    read = size;
    pending += buffer.toString('utf8');
    const end = pending.lastIndexOf('\n');
    if (end === -1) return;
    const complete = pending.slice(0, end);
    pending = pending.slice(end + 1);
    for (const line of complete.split('\n')) {
      if (!line.includes('"svcSoakSample":1')) continue;
      const sample = JSON.parse(line) as Sample;
      samples.push(sample);
      intervals.push(current);
      current = { ok: 0, failed: 0 };
      if (!printedHeader) {
        say(header());
        printedHeader = true;
      }
      say(row(samples.length, samples[0]!.t, sample, intervals.at(-1)!));
    }
  };
  const fire = (stream: boolean) => {
    const request = pool
      .request({ method: 'POST', path: '/v1/chat/completions', headers: group.headers, body: stream ? streamBody : plainBody })
      .then(async (res) => {
        const text = await res.body.text();
        if (res.statusCode === 200 && (!stream || text.includes('data: [DONE]'))) current.ok++;
        else current.failed++;
      })
      .catch(() => {
        current.failed++;
      });
    inflight.add(request);
    void request.finally(() => inflight.delete(request));
  };
  const start = performance.now();
  let sent = 0;
  let nextCollect = start + 1000;
  try {
    while (performance.now() - start < options.durationMs) {
      const due = Math.floor(((performance.now() - start) * options.rate) / 1000);
      while (sent < due) fire(sent++ % 2 === 1);
      if (performance.now() >= nextCollect) {
        collect();
        nextCollect += 1000;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(inflight);
    // One more sample after the load (and its interval's counts) when it is due within the interval.
    const waitUntil = Date.now() + options.sampleMs + 2000;
    const count = samples.length;
    while (samples.length === count && Date.now() < waitUntil) {
      collect();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await pool.close();
  }
  let ledger: LedgerCheck;
  try {
    ledger = await group.ledgerCheck(statsDelta(before, await quietStats(upstream)));
  } finally {
    await group.stop();
  }
  const verdict = flat(samples);
  say('');
  for (const line of verdict.lines) say(line);
  say(`${ledger.ok ? 'MET   ' : 'MISSED'}  ledger: ${ledger.message}`);
  const requests = intervals.reduce((sum, i) => ({ ok: sum.ok + i.ok, failed: sum.failed + i.failed }), { ok: 0, failed: 0 });
  say(`soak: ${sent} requests sent, ${requests.ok + current.ok} ok, ${requests.failed + current.failed} failed`);
  writeFileSync(options.outFile, JSON.stringify({ mode: 'soak', durationMs: options.durationMs, rate: options.rate, sampleMs: options.sampleMs, samples, intervals, verdict, ledger }, null, 2));
  say(`bench: wrote ${options.outFile}`);
  return verdict.ok && ledger.ok && samples.length >= 2;
}

function header(): string {
  return ['#', 't (s)', 'RSS MB', 'heap used MB', 'heap total MB', 'external MB', 'lag p50 ms', 'lag p99 ms', 'lag max ms', 'handles', 'ok', 'failed'].map((h, i) => (i === 0 ? h.padEnd(3) : h.padStart(widthOf(h)))).join('  ');
}

function widthOf(label: string): number {
  return Math.max(label.length, 7);
}

function row(n: number, t0: number, s: Sample, interval: Interval): string {
  const cells = [
    String(n).padEnd(3),
    ((s.t - t0) / 1000).toFixed(0),
    s.rssMb.toFixed(1),
    s.heapUsedMb.toFixed(1),
    s.heapTotalMb.toFixed(1),
    s.externalMb.toFixed(1),
    s.lagP50Ms.toFixed(2),
    s.lagP99Ms.toFixed(2),
    s.lagMaxMs.toFixed(2),
    String(s.handles),
    String(interval.ok),
    String(interval.failed),
  ];
  const labels = ['#', 't (s)', 'RSS MB', 'heap used MB', 'heap total MB', 'external MB', 'lag p50 ms', 'lag p99 ms', 'lag max ms', 'handles', 'ok', 'failed'];
  return cells.map((cell, i) => (i === 0 ? cell : cell.padStart(widthOf(labels[i]!)))).join('  ');
}

/**
 * Flat: with the first sample left out (start-up, JIT), the median of the last third of the samples is at
 * most the first third's plus a margin — RSS and heap used +10 % + 8 MB, handles +25 % + 16, event-loop lag
 * p99 ×2 + 5 ms. A leak grows through the run and fails; noise around a level does not.
 */
function flat(samples: Sample[]): { ok: boolean; lines: string[] } {
  const steady = samples.slice(1);
  if (steady.length < 3) return { ok: false, lines: [`MISSED  flat: ${samples.length} samples; need at least 4 (run longer than 4 sample intervals)`] };
  const third = Math.max(1, Math.floor(steady.length / 3));
  const first = steady.slice(0, third);
  const last = steady.slice(-third);
  const checks: [string, (s: Sample) => number, (v: number) => number, string][] = [
    ['RSS (MB)', (s) => s.rssMb, (v) => v * 1.1 + 8, '+10 % + 8'],
    ['heap used (MB)', (s) => s.heapUsedMb, (v) => v * 1.1 + 8, '+10 % + 8'],
    ['handles', (s) => s.handles, (v) => v * 1.25 + 16, '+25 % + 16'],
    ['event-loop lag p99 (ms)', (s) => s.lagP99Ms, (v) => v * 2 + 5, '×2 + 5'],
  ];
  const lines: string[] = [];
  let ok = true;
  for (const [name, of, limit, rule] of checks) {
    const a = median(first.map(of));
    const b = median(last.map(of));
    const met = b <= limit(a);
    ok &&= met;
    lines.push(`${met ? 'MET   ' : 'MISSED'}  flat ${name}: first third ${a.toFixed(1)}, last third ${b.toFixed(1)} (limit ${rule} → ${limit(a).toFixed(1)})`);
  }
  return { ok, lines };
}
