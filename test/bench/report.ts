/**
 * Turns per-round metrics into the summary: the median over rounds of each round's value, latencies as
 * "added over direct", throughput as ratios, and the targets. Prints a table; the runner writes
 * the same data as JSON.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import type { Metrics } from './scenarios.ts';

export type SystemName = 'direct' | 'passthrough' | 'portkey' | 'svc';
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

/** Issue 16's targets: svc against the passthrough and Portkey measured in the same run. */
export function targets(summary: Summary): Target[] {
  if (!summary.svc) return [];
  const ms = (system: SystemName, key: string) => added(summary, system, key) / 1000;
  const svc = summary.svc;
  const passthrough = summary.passthrough ?? {};
  const rps = svc['s3.rps'] ?? NaN;
  const fixed = (value: number) => value.toFixed(3);
  const list: Target[] = [];
  for (const [name, key, slack] of [['S1 added p50 (ms)', 's1.p50Us', 0.2], ['S1 added p99 (ms)', 's1.p99Us', 1]] as const) {
    const limit = ms('passthrough', key) + slack;
    list.push({ name, value: ms('svc', key), limit: `≤ passthrough's + ${slack} = ${fixed(limit)}`, met: ms('svc', key) <= limit });
  }
  const perPortkey = rps / (summary.portkey?.['s3.rps'] ?? NaN);
  const perPassthrough = rps / (passthrough['s3.rps'] ?? NaN);
  list.push({ name: 'S3 req/s ÷ Portkey', value: perPortkey, limit: '≥ 5', met: perPortkey >= 5 });
  list.push({ name: 'S3 req/s ÷ passthrough', value: perPassthrough, limit: '≥ 0.5', met: perPassthrough >= 0.5 });
  for (const key of Object.keys(svc).filter((k) => /^s4\.\d+\.ttftP50Us$/.test(k))) {
    const prefix = key.slice(0, key.lastIndexOf('.'));
    const name = prefix.toUpperCase();
    const lost = (svc[`${prefix}.lostChunks`] ?? 0) + (svc[`${prefix}.incomplete`] ?? 0);
    list.push({ name: `${name} added TTFT p50 (ms)`, value: ms('svc', key), limit: '≤ 0.5', met: ms('svc', key) <= 0.5 });
    const cpu = (svc[`${prefix}.cpuMsPerKChunk`] ?? NaN) / (passthrough[`${prefix}.cpuMsPerKChunk`] ?? NaN);
    list.push({ name: `${name} CPU per 1,000 chunks ÷ passthrough`, value: cpu, limit: '≤ 1.3', met: cpu <= 1.3 });
    list.push({ name: `${name} lost chunks + incomplete streams`, value: lost, limit: '= 0', met: lost === 0 });
  }
  const open = svc['s5.openStreamsRssMb'];
  if (open !== undefined) list.push({ name: 'S5 RSS with open streams (MB)', value: open, limit: '≤ 300', met: open <= 300 });
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

const SYSTEMS: SystemName[] = ['direct', 'passthrough', 'portkey', 'svc'];

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

function signed(ms: number): string {
  return `${ms >= 0 ? '+' : ''}${ms.toFixed(3)}`;
}

export function printTargets(list: Target[]): string {
  return list.map((t) => `${t.met ? 'MET   ' : 'MISSED'}  ${t.name}: ${Number.isInteger(t.value) ? t.value : t.value.toFixed(3)} (target ${t.limit})`).join('\n');
}
