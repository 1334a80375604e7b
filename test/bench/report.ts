/**
 * Turns per-round metrics into the summary: the median over rounds of each round's value, latencies as
 * "added over direct", throughput as ratios, and the targets. Prints a table; the runner writes
 * the same data as JSON.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import type { Metrics } from './scenarios.ts';

export type SystemName = 'direct' | 'passthrough' | 'portkey' | 'svc' | 'svc-libs';
export type Rounds = Partial<Record<SystemName, Metrics[]>>;
export type Summary = Partial<Record<SystemName, Metrics>>;

export function median(values: number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2;
}

/** Median over rounds of every metric, per system. */
export function summarise(rounds: Rounds): Summary {
  const summary: Summary = {};
  for (const [system, list] of Object.entries(rounds) as [SystemName, Metrics[]][]) {
    const keys = new Set(list.flatMap((m) => Object.keys(m)));
    const out: Metrics = {};
    for (const key of keys) out[key] = median(list.map((m) => m[key]).filter((v): v is number => v !== undefined));
    summary[system] = out;
  }
  return summary;
}

/** Latency metrics minus direct's (the gateway's own cost). */
export function added(summary: Summary, system: SystemName, key: string): number {
  return (summary[system]?.[key] ?? NaN) - (summary.direct?.[key] ?? NaN);
}

export interface Target {
  name: string;
  value: number;
  limit: string;
  met: boolean;
}

/** The rates of S2 whose tail is held to the passthrough's. */
const TAIL_RATES = [1000, 2000];

/**
 * svc's added p99 within 1.5× the passthrough's. An added p99 at or below zero (svc's p99 no worse than the
 * upstream's own) meets it whatever the passthrough did; below a passthrough at or under zero, svc's must be too.
 */
export function tailMet(svcAddedMs: number, passthroughAddedMs: number): boolean {
  if (!Number.isFinite(svcAddedMs) || !Number.isFinite(passthroughAddedMs)) return false;
  if (svcAddedMs <= 0) return true;
  return passthroughAddedMs > 0 && svcAddedMs <= 1.5 * passthroughAddedMs;
}

/** Issue 16's targets: svc against the passthrough and Portkey measured in the same run. */
export function targets(summary: Summary): Target[] {
  if (!summary.svc) return [];
  const ms = (system: SystemName, key: string) => added(summary, system, key) / 1000;
  const svc = summary.svc;
  const passthrough = summary.passthrough ?? {};
  const rps = svc['s3.rps'] ?? NaN;
  const fixed = (value: number) => value.toFixed(3);
  const overPassthrough = (name: string, key: string, slack: number): Target => {
    const limit = ms('passthrough', key) + slack;
    return { name, value: ms('svc', key), limit: `≤ passthrough's + ${slack} = ${fixed(limit)}`, met: ms('svc', key) <= limit };
  };
  // Relative to the bare passthrough measured in the same run: absolute figures move with the machine's hour.
  const list: Target[] = [overPassthrough('S1 added p50 (ms)', 's1.p50Us', 0.2), overPassthrough('S1 added p99 (ms)', 's1.p99Us', 1)];
  const perPortkey = rps / (summary.portkey?.['s3.rps'] ?? NaN);
  const perPassthrough = rps / (passthrough['s3.rps'] ?? NaN);
  list.push({ name: 'S3 req/s ÷ Portkey', value: perPortkey, limit: '≥ 5', met: perPortkey >= 5 });
  list.push({ name: 'S3 req/s ÷ passthrough', value: perPassthrough, limit: '≥ 0.7', met: perPassthrough >= 0.7 });
  for (const key of Object.keys(svc).filter((k) => /^s4\.\d+\.ttftP50Us$/.test(k))) {
    const prefix = key.slice(0, key.lastIndexOf('.'));
    const name = prefix.toUpperCase();
    const lost = (svc[`${prefix}.lostChunks`] ?? 0) + (svc[`${prefix}.incomplete`] ?? 0);
    list.push(overPassthrough(`${name} added TTFT p50 (ms)`, key, 0.3));
    const cpu = (svc[`${prefix}.cpuMsPerKChunk`] ?? NaN) / (passthrough[`${prefix}.cpuMsPerKChunk`] ?? NaN);
    list.push({ name: `${name} CPU per 1,000 chunks ÷ passthrough`, value: cpu, limit: '≤ 1.1', met: cpu <= 1.1 });
    list.push({ name: `${name} lost chunks + incomplete streams`, value: lost, limit: '= 0', met: lost === 0 });
  }
  // Tail under a steady rate (issue 50): what svc adds to S2's p99 against what the bare passthrough adds.
  for (const rate of TAIL_RATES) {
    const key = `s2.${rate}.p99Us`;
    if (svc[key] === undefined) continue;
    const ratio = ms('svc', key) / ms('passthrough', key);
    list.push({ name: `S2 ${rate}/s added p99 ÷ passthrough's (${signedMs(ms('svc', key))} ÷ ${signedMs(ms('passthrough', key))} ms)`, value: ratio, limit: '≤ 1.5', met: tailMet(ms('svc', key), ms('passthrough', key)) });
  }
  const open = svc['s5.openStreamsRssMb'];
  if (open !== undefined) {
    const ratio = open / (passthrough['s5.openStreamsRssMb'] ?? NaN);
    list.push({ name: `S5 RSS with open streams: ${Math.round(open)} MB ÷ passthrough`, value: ratio, limit: '≤ 1.3', met: ratio <= 1.3 });
  }
  return list;
}

/**
 * Issue 50's paths beside chat (paths.ts), each against chat's added p50 from the same run: a path that does
 * what chat does (authenticate, admit, call a backend, settle) may add at most 0.3 ms more than chat; the two
 * with no upstream, whose direct call is a bare round trip, are allowed their own reads besides — membership
 * REST one PostgreSQL and one Redis read (1 ms), the staff search its index lookups (2 ms). The fan-out's
 * delivery target is the issue's own; its RSS per socket is stated, not judged.
 */
export function pathTargets(summary: Metrics): Target[] {
  const list: Target[] = [];
  const ms = (key: string) => (summary[key] ?? NaN) / 1000;
  const chat = ms('paths.chat.addedP50Us');
  const overChat = (name: string, path: string, slack: number, why = '') => {
    const value = ms(`paths.${path}.addedP50Us`);
    const limit = chat + slack;
    list.push({ name: `${name} added p50 (ms)`, value, limit: `≤ chat's ${chat.toFixed(3)} + ${slack}${why} = ${limit.toFixed(3)}`, met: value <= limit });
  };
  if (summary['paths.chat.addedP50Us'] !== undefined) {
    overChat('/v1/responses', 'responses', 0.3);
    overChat('search over REST', 'search.rest', 0.3);
    overChat('search over MCP', 'search.mcp', 0.3);
    overChat('membership REST /api/membership/usage', 'usage', 1, ' (its reads)');
    overChat('GraphQL staffSearch', 'staff', 2, ' (its lookups)');
    const failures = Object.entries(summary)
      .filter(([key]) => key.startsWith('paths.') && key.endsWith('.failures'))
      .reduce((sum, [, n]) => sum + n, 0);
    list.push({ name: 'paths failed calls', value: failures, limit: '= 0', met: failures === 0 });
  }
  const p95 = summary['fanout.deliveryP95Us'];
  if (p95 !== undefined) {
    const sockets = summary['fanout.sockets'] ?? NaN;
    const members = summary['fanout.accounts'] ?? 1;
    list.push({ name: `live-usage delivery p95 (ms), ${sockets} sockets of ${members} member(s) on 2 instances`, value: p95 / 1000, limit: '≤ 250', met: p95 / 1000 <= 250 });
    const lost = (summary['fanout.missed'] ?? NaN) + (summary['fanout.stale'] ?? NaN) + (sockets - (summary['fanout.subscribed'] ?? NaN)) + (summary['fanout.turnsFailed'] ?? 0);
    list.push({ name: 'live-usage updates missed or stale, sockets refused, turns refused', value: lost, limit: '= 0', met: lost === 0 });
  }
  return list;
}

/**
 * Issue 47's question: does svc's own HTTP code (the chat lane and the HTTP/1.1 pool) earn its keep against
 * Fastify's route and undici's Pool (`svc-libs`), measured in the same run? Each figure is the libraries'
 * against svc's own; "within 10 %" means no more than 10 % worse (better counts as within).
 */
export function libraryAb(summary: Summary): Target[] {
  if (!summary.svc || !summary['svc-libs']) return [];
  const list: Target[] = [];
  const addedP50 = (system: SystemName) => added(summary, system, 's1.p50Us') / 1000;
  if (summary.svc['s1.p50Us'] !== undefined) {
    const own = addedP50('svc');
    const libs = addedP50('svc-libs');
    list.push({ name: `S1 added p50 (ms): libraries ${libs.toFixed(3)}, svc's own ${own.toFixed(3)}; libraries ÷ own`, value: libs / own, limit: '≤ 1.1', met: libs <= own * 1.1 });
  }
  const rps = (system: SystemName) => summary[system]?.['s3.rps'] ?? NaN;
  if (summary.svc['s3.rps'] !== undefined) {
    list.push({ name: `S3 req/s: libraries ${Math.round(rps('svc-libs'))}, svc's own ${Math.round(rps('svc'))}; libraries ÷ own`, value: rps('svc-libs') / rps('svc'), limit: '≥ 0.9', met: rps('svc-libs') >= rps('svc') * 0.9 });
  }
  for (const key of Object.keys(summary.svc).filter((k) => /^s4\.\d+\.cpuMsPerKChunk$/.test(k))) {
    const own = summary.svc[key]!;
    const libs = summary['svc-libs'][key] ?? NaN;
    const name = key.slice(0, key.indexOf('.', 3)).toUpperCase();
    list.push({ name: `${name} streams CPU ms / 1,000 chunks: libraries ${libs.toFixed(1)}, svc's own ${own.toFixed(1)}; libraries ÷ own`, value: libs / own, limit: '≤ 1.1', met: libs <= own * 1.1 });
  }
  return list;
}

export function machine() {
  return {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    loadavg: loadavg().map((v) => Number(v.toFixed(2))),
  };
}

const SYSTEMS: SystemName[] = ['direct', 'passthrough', 'portkey', 'svc', 'svc-libs'];

type Row = [label: string, key: string, kind: 'added-ms' | 'ms' | 'rps' | 'pct' | 'num' | 'mb'];

export function printTable(summary: Summary, rates: number[], concurrency: number[]): string {
  const rows: Row[] = [
    ['S1 added p50 (ms)', 's1.p50Us', 'added-ms'],
    ['S1 added p99 (ms)', 's1.p99Us', 'added-ms'],
    ['S1 p50 (ms)', 's1.p50Us', 'ms'],
    ['S1 p99 (ms)', 's1.p99Us', 'ms'],
    // svc's own steps, from its `server-timing` header: where its added time goes.
    ['S1 server-timing auth p50 (ms)', 's1.step.auth.p50Us', 'ms'],
    ['S1 server-timing admit p50 (ms)', 's1.step.admit.p50Us', 'ms'],
    ['S1 server-timing upstream p50 (ms)', 's1.step.upstream.p50Us', 'ms'],
  ];
  for (const rate of rates) {
    rows.push([`S2 ${rate}/s added p99 (ms)`, `s2.${rate}.p99Us`, 'added-ms']);
    rows.push([`S2 ${rate}/s success`, `s2.${rate}.success`, 'pct']);
    rows.push([`S2 ${rate}/s CPU ms / request`, `s2.${rate}.cpuMsPerReq`, 'num']);
  }
  rows.push(['S3 req/s (64 conn)', 's3.rps', 'rps']);
  for (const c of concurrency) {
    rows.push([`S4 ${c} streams added TTFT p50 (ms)`, `s4.${c}.ttftP50Us`, 'added-ms']);
    rows.push([`S4 ${c} streams added TTFT p99 (ms)`, `s4.${c}.ttftP99Us`, 'added-ms']);
    rows.push([`S4 ${c} streams gap p50 (ms)`, `s4.${c}.gapP50Us`, 'ms']);
    rows.push([`S4 ${c} streams gap p99 (ms)`, `s4.${c}.gapP99Us`, 'ms']);
    rows.push([`S4 ${c} streams lost chunks`, `s4.${c}.lostChunks`, 'num']);
    rows.push([`S4 ${c} streams server-timing admit p50 (ms)`, `s4.${c}.step.admit.p50Us`, 'ms']);
    rows.push([`S4 ${c} streams server-timing upstream p50 (ms)`, `s4.${c}.step.upstream.p50Us`, 'ms']);
    rows.push([`S4 ${c} streams CPU ms / 1,000 chunks`, `s4.${c}.cpuMsPerKChunk`, 'num']);
  }
  rows.push(['S5 CPU ms / request (S3)', 's5.cpuMsPerReq', 'num']);
  rows.push(['S5 RSS after S3 (MB)', 's5.rssMb', 'mb']);
  rows.push(['S5 RSS, open streams (MB)', 's5.openStreamsRssMb', 'mb']);
  rows.push(['S5 of which malloc heap (MB)', 's5.openStreamsMallocHeapMb', 'mb']);
  rows.push(['S5 of which other anonymous (MB)', 's5.openStreamsAnonymousMb', 'mb']);
  rows.push(['S5 of which mapped files (MB)', 's5.openStreamsFilesMb', 'mb']);
  rows.push(['S5 heap used, open streams (MB)', 's5.openStreamsHeapUsedMb', 'mb']);
  rows.push(['S5 heap total, open streams (MB)', 's5.openStreamsHeapTotalMb', 'mb']);
  rows.push(['S5 external, open streams (MB)', 's5.openStreamsExternalMb', 'mb']);

  const present = SYSTEMS.filter((s) => summary[s]);
  const cell = (system: SystemName, key: string, kind: Row[2]): string => {
    const value = summary[system]?.[key];
    if (value === undefined || Number.isNaN(value)) return '—';
    switch (kind) {
      case 'added-ms':
        return system === 'direct' ? `(${(value / 1000).toFixed(3)})` : signed(added(summary, system, key) / 1000);
      case 'ms':
        return (value / 1000).toFixed(3);
      case 'rps':
        return Math.round(value).toLocaleString('en-US');
      case 'pct':
        return `${(value * 100).toFixed(1)} %`;
      case 'mb':
        return value.toFixed(0);
      case 'num':
        return value < 10 ? value.toFixed(3) : value.toFixed(0);
    }
  };
  const table = [['', ...present], ...rows.map(([label, key, kind]) => [label, ...present.map((s) => cell(s, key, kind))])];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  const lines = table.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  const svcRps = summary.svc?.['s3.rps'];
  if (svcRps !== undefined) {
    const ratio = (other: SystemName) => (svcRps / (summary[other]?.['s3.rps'] ?? NaN)).toFixed(2);
    lines.push('', `S3 ratios: svc/passthrough ${ratio('passthrough')}×, svc/portkey ${ratio('portkey')}×`);
  }
  return lines.join('\n');
}

function signedMs(ms: number): string {
  return `${ms >= 0 ? '+' : ''}${ms.toFixed(1)}`;
}

function signed(ms: number): string {
  return `${ms >= 0 ? '+' : ''}${ms.toFixed(3)}`;
}

export function printTargets(list: Target[]): string {
  return list.map((t) => `${t.met ? 'MET   ' : 'MISSED'}  ${t.name}: ${Number.isInteger(t.value) ? t.value : t.value.toFixed(3)} (target ${t.limit})`).join('\n');
}
