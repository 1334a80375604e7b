/**
 * `npm run bench:cluster [-- --redis=single,cluster] [-- --rate=300] [-- --duration=10s]`: three svc
 * processes behind HAProxy (haproxy.ts) on one PostgreSQL database, once on one Redis and once on a
 * throwaway 3-master Redis Cluster, checked for what several instances must hold (cluster-checks.ts):
 *
 *   load          autocannon through the balancer at a modest fixed rate: req/s, p50/p99;
 *   pool edge     a member whose pool allows exactly N turns fires many more at once across the three:
 *                 exactly N answered, the ledger bills exactly what the pool holds, never past its limit;
 *   live usage    a `usageUpdated` subscriber on instance A sees each turn served by B and C: p50/p95;
 *   IPs           an organisation key used from five source addresses (127.0.0.11–15) through the balancer:
 *                 each address's count in the console is exactly what it sent, summed over the instances;
 *   revocation    a key revoked on one instance: time until all three refuse it;
 *   kill -9       one instance killed mid-load: every 200 has exactly one ledger row, what the dead one
 *                 held is settled by a survivor's sweeper, every pool equals the ledger, and
 *                 `svc ledger check` finds the rollups equal to the ledger.
 *
 * Prints one table (Markdown) and writes `bench-results/<timestamp>-cluster.json`; exits 1 if a check fails.
 * The machine this is written for has two cores shared with others: the rate is kept low on purpose, and
 * the checks, not the throughput, are the point.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startRedisCluster, type TestRedisCluster } from '../helpers/redis-cluster.ts';
import { checkEdge, checkIps, checkKill, checkLiveUsage, checkLoad, checkRevocation, clusterConfig, openBench, type Row } from './cluster-checks.ts';
import { haproxyInstalled, HAPROXY_MISSING, startHaproxy } from './haproxy.ts';
import { pinSelf } from './procs.ts';
import { machine } from './report.ts';
import { parseDuration } from './soak.ts';
import { startSvcGroup } from './svc.ts';
import { LOAD_CORE, ROOT, startUpstream } from './systems.ts';

const args = process.argv.slice(2);
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const variants = (option('redis') ?? 'single,cluster').split(',') as ('single' | 'cluster')[];
const rate = Number(option('rate') ?? 300);
const durationMs = parseDuration(option('duration') ?? '10s');

const say = (text: string) => process.stdout.write(`${text}\n`);
if (!haproxyInstalled()) {
  process.stderr.write(`${HAPROXY_MISSING}\n`);
  process.exit(2);
}
if (variants.some((v) => v !== 'single' && v !== 'cluster')) {
  process.stderr.write('bench: --redis takes single, cluster or both (single,cluster)\n');
  process.exit(2);
}

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const outDir = resolve(ROOT, 'bench-results');
mkdirSync(outDir, { recursive: true });
const logOf = (name: string) => resolve(outDir, `${stamp}-cluster-${name}.log`);
const info = machine();
say(`bench:cluster: 3 svc instances behind HAProxy, ${variants.join(' and ')} Redis; ${rate} req/s for ${durationMs / 1000} s; ${info.nproc} cores (${info.cpu}), Node ${info.node}, load ${info.loadavg.join(' ')}`);
pinSelf(LOAD_CORE);

const upstream = await startUpstream(logOf('upstream'));
const columns: Record<string, Row[]> = {};
try {
  for (const variant of variants) {
    const label = variant === 'single' ? 'one Redis' : 'Redis Cluster (3 masters)';
    say(`\n${label}:`);
    let redisCluster: TestRedisCluster | null = null;
    try {
      if (variant === 'cluster') redisCluster = await startRedisCluster(3);
      const group = await startSvcGroup(upstream, 3, (i) => logOf(`${variant}-svc${i + 1}`), {
        logLevel: 'warn',
        config: clusterConfig,
        ...(redisCluster ? { redisUrl: redisCluster.url } : {}),
      });
      try {
        const balancer = await startHaproxy(
          group.instances.map((instance) => instance.origin),
          logOf(`${variant}-haproxy`),
          LOAD_CORE,
        );
        const bench = await openBench(group, balancer, redisCluster, say);
        try {
          const rows: Row[] = [];
          for (const check of [checkLoad(rate, durationMs), checkEdge, checkLiveUsage, checkIps, checkRevocation, checkKill(rate, durationMs)]) {
            const found = await check(bench);
            for (const row of found) say(`  ${row.ok === null ? '      ' : row.ok ? 'PASS  ' : 'FAIL  '}${row.check}: ${row.result}`);
            rows.push(...found);
          }
          columns[label] = rows;
        } finally {
          await bench.close();
          await balancer.stop();
        }
      } finally {
        await group.stop();
      }
    } finally {
      await redisCluster?.stop();
    }
  }
} finally {
  await upstream.stop();
}

const labels = Object.keys(columns);
const checks = columns[labels[0]!]!.map((row) => row.check);
const cell = (row: Row | undefined) => (row ? `${row.ok === null ? '' : row.ok ? '**PASS** ' : '**FAIL** '}${row.result}` : '—');
const table = [
  `| check | ${labels.join(' | ')} |`,
  `|---|${labels.map(() => '---').join('|')}|`,
  ...checks.map((check) => `| ${check} | ${labels.map((label) => cell(columns[label]!.find((row) => row.check === check))).join(' | ')} |`),
].join('\n');
say(`\n${table}\n`);
const outFile = resolve(outDir, `${stamp}-cluster.json`);
writeFileSync(outFile, JSON.stringify({ machine: info, rate, durationMs, columns }, null, 2));
say(`bench:cluster: wrote ${outFile}`);
const failed = Object.values(columns).flat().filter((row) => row.ok === false);
process.exit(failed.length === 0 ? 0 : 1);
