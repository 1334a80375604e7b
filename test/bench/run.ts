/**
 * `npm run bench [-- --quick] [-- --systems=direct,passthrough,portkey,svc,svc-libs] [-- --rounds=N] [-- --profile]
 *   [-- --scenarios=s1,s2,s3,s4,s5] [-- --autocannon] [-- --svc-log-level=warn] [-- --svc-node-flags='--max-semi-space-size=8'] [-- --exact]`
 * (`--profile` writes a V8 CPU profile of svc to bench-results/<timestamp>-profile/; `--exact` turns svc's admission leases off.)
 * `svc-libs` is svc with Fastify's route and undici's Pool in place of its chat lane and HTTP/1.1 pool; it runs
 * only when named. `npm run bench -- --systems=svc,svc-libs --scenarios=s1,s3,s4` weighs the two (issue 47).
 * Two other modes, each on its own:
 *   `--instances=N` or `--instances=1,2,4` [`--duration=8s`] [`--instances-of=passthrough`]: N svc processes on one
 *     database and Redis (scale.ts), or N bare passthroughs as the control;
 *   `--soak=10m` [`--soak-rate=40`] [`--soak-sample=10s`]: a fixed rate with streams, svc sampled every 10 s (soak.ts);
 *   `--only=paths` [`--paths=requests|fanout`] [`--fanout-sockets=10000`] [`--fanout-turns=N`] [`--fanout-accounts=N`]: the paths beside
 *     chat — responses, search over REST and MCP, membership REST, a GraphQL staff query — against chat in the
 *     same run, and live-usage fan-out over two instances (paths.ts, fanout.ts).
 *
 * Starts the scripted upstream and every system under test as pinned child processes, runs the
 * scenarios in interleaved rounds (every system once per scenario per round, in a rotating order),
 * prints the median of the round medians, writes `bench-results/<timestamp>.json`, and checks that svc's
 * ledger holds exactly the tokens the upstream emitted for svc's requests.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LOAD_CORE, ROOT, directSystem, quietStats, startPassthrough, startPortkey, startUpstream, statsDelta, statsSum, type System, type Upstream, type UpstreamStats } from './systems.ts';
import { hasTaskset, pinSelf } from './procs.ts';
import { libraryAb, machine, printTable, printTargets, summarise, targets, type Rounds, type SystemName } from './report.ts';
import { fullParams, openStreamsScenario, quickParams, scenarios, type Scenario } from './scenarios.ts';
import { LIBRARY_PATH, startSvc, type SvcSystem } from './svc.ts';
import { printSearch, searchScenario } from './search.ts';
import { startScriptedSearxng } from '../fixtures/scripted-searxng.ts';
import { runScale, scaleOutFile } from './scale.ts';
import { parseDuration, runSoak } from './soak.ts';
import { pathsParams, runPaths } from './paths.ts';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
/** `--exact`: svc with admission leases off (every request admitted by Redis), for an A/B against the default. */
const exact = args.includes('--exact');
const profile = args.includes('--profile');
const svcLogLevel = args.find((a) => a.startsWith('--svc-log-level='))?.slice('--svc-log-level='.length);
const svcNodeFlags = args.find((a) => a.startsWith('--svc-node-flags='))?.slice('--svc-node-flags='.length);
const only = args.find((a) => a.startsWith('--systems='))?.slice('--systems='.length).split(',') as SystemName[] | undefined;
const wanted = (name: SystemName) => name === 'direct' || (!only && name !== 'svc-libs') || (only?.includes(name) ?? false);
const base = quick ? quickParams : fullParams;
const params = args.includes('--autocannon') ? { ...base, s3: { ...base.s3, generator: 'autocannon' as const } } : base;
const onlyScenarios = args.find((a) => a.startsWith('--scenarios='))?.slice('--scenarios='.length).split(',');
const rounds = Number(args.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? params.rounds);

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const outDir = resolve(ROOT, 'bench-results');
mkdirSync(outDir, { recursive: true });
const logOf = (name: string) => resolve(outDir, `${stamp}-${name}.log`);
const say = (text: string) => process.stdout.write(`${text}\n`);

const valueOf = (flag: string) => args.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3);
if (valueOf('only') !== undefined) {
  if (valueOf('only') !== 'paths') throw new Error(`bench: --only wants paths; not ${valueOf('only')}`);
  const which = valueOf('paths') ?? 'all';
  if (which !== 'all' && which !== 'requests' && which !== 'fanout') throw new Error(`bench: --paths wants requests or fanout; not ${which}`);
  const base = pathsParams[quick ? 'quick' : 'full'];
  const number = (flag: string, fallback: number) => Number(valueOf(flag) ?? fallback);
  const pathParams = {
    ...base,
    rounds: number('rounds', base.rounds),
    fanout: { sockets: number('fanout-sockets', base.fanout.sockets), turns: number('fanout-turns', base.fanout.turns), accounts: number('fanout-accounts', 1) },
  };
  const info = machine();
  say(`bench: paths (${which})${quick ? ', quick' : ''}, ${pathParams.rounds} rounds; ${info.nproc} cores (${info.cpu}), Node ${info.node}, load ${info.loadavg.join(' ')}`);
  pinSelf(LOAD_CORE);
  const upstream = await startUpstream(logOf('upstream'));
  const searxng = await startScriptedSearxng();
  let passed: boolean;
  try {
    await upstream.setScript({ latencyMs: 0 });
    passed = await runPaths({
      params: pathParams,
      which,
      upstream,
      searchUrl: searxng.url,
      logOf,
      svc: { ...(svcLogLevel ? { logLevel: svcLogLevel } : {}), ...(svcNodeFlags ? { nodeFlags: svcNodeFlags.split(' ') } : {}), ...(profile ? { profileDir: resolve(outDir, `${stamp}-profile`) } : {}) },
      outFile: resolve(outDir, `${stamp}-paths.json`),
      say,
    });
  } finally {
    await upstream.stop();
    await searxng.close();
  }
  process.exit(passed ? 0 : 1);
}

const instancesArg = args.find((a) => a.startsWith('--instances='))?.slice('--instances='.length);
const soakArg = args.find((a) => a.startsWith('--soak='))?.slice('--soak='.length);
if (instancesArg !== undefined || soakArg !== undefined) {
  const info = machine();
  say(`bench: ${instancesArg !== undefined ? `instances ${instancesArg}` : `soak ${soakArg}`}${quick ? ' (quick)' : ''}${exact ? ', admission exact' : ''}; ${info.nproc} cores (${info.cpu}), Node ${info.node}, load ${info.loadavg.join(' ')}`);
  pinSelf(LOAD_CORE);
  const upstream = await startUpstream(logOf('upstream'));
  const svcOptions = { ...(svcLogLevel ? { logLevel: svcLogLevel } : {}), ...(svcNodeFlags ? { nodeFlags: svcNodeFlags.split(' ') } : {}), ...(exact ? { exact: true } : {}) };
  let passed: boolean;
  try {
    if (instancesArg !== undefined) {
      const counts = instancesArg.split(',').map((n) => Number(n));
      if (counts.some((n) => !Number.isInteger(n) || n < 1 || n > 64)) throw new Error(`bench: --instances wants whole numbers from 1 to 64, such as 2 or 1,2,4; not ${instancesArg}`);
      const duration = args.find((a) => a.startsWith('--duration='))?.slice('--duration='.length);
      const of = args.find((a) => a.startsWith('--instances-of='))?.slice('--instances-of='.length) ?? 'svc';
      if (of !== 'svc' && of !== 'passthrough') throw new Error(`bench: --instances-of wants svc or passthrough; not ${of}`);
      passed = await runScale({
        counts,
        quick,
        rounds: Number(args.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? (quick ? 1 : 3)),
        connections: params.s3.connections,
        durationMs: duration ? parseDuration(duration) : params.s3.durationMs,
        upstream,
        outFile: scaleOutFile(outDir, stamp),
        logOf,
        svc: svcOptions,
        system: of,
        say,
      });
    } else {
      const sample = args.find((a) => a.startsWith('--soak-sample='))?.slice('--soak-sample='.length);
      passed = await runSoak({
        durationMs: parseDuration(soakArg!),
        rate: Number(args.find((a) => a.startsWith('--soak-rate='))?.slice('--soak-rate='.length) ?? (quick ? 20 : 40)),
        sampleMs: sample ? parseDuration(sample) : 10_000,
        upstream,
        log: logOf('svc-soak'),
        outFile: resolve(outDir, `${stamp}-soak.json`),
        svc: svcOptions,
        say,
      });
    }
  } finally {
    await upstream.stop();
  }
  process.exit(passed ? 0 : 1);
}

const startedAt = Date.now();
const machineBefore = machine();
say(`bench: ${quick ? 'quick' : 'full'} run, ${rounds} rounds, svc admission ${exact ? 'exact (leases off)' : 'leased (the default)'}; ${machineBefore.nproc} cores (${machineBefore.cpu}), Node ${machineBefore.node}, load ${machineBefore.loadavg.join(' ')}`);
if (!hasTaskset) say('bench: taskset not found, processes are NOT pinned (numbers are less comparable)');
pinSelf(LOAD_CORE);

const upstream: Upstream = await startUpstream(logOf('upstream'));
// The search backend of the search scenario, answering on the load generator's core like the upstream.
const searxng = await startScriptedSearxng();
const systems: System[] = [directSystem(upstream)];
let svc: SvcSystem | undefined;
let svcLibs: SvcSystem | undefined;
const notes: string[] = [];
try {
  if (wanted('passthrough')) systems.push(await startPassthrough(upstream, logOf('passthrough')));
  if (wanted('portkey')) systems.push(await startPortkey(upstream, logOf('portkey')));
  if (wanted('svc')) {
    try {
      svc = await startSvc(upstream, logOf('svc'), {
        ...(profile ? { profileDir: resolve(outDir, `${stamp}-profile`) } : {}),
        ...(svcLogLevel ? { logLevel: svcLogLevel } : {}),
        ...(svcNodeFlags ? { nodeFlags: svcNodeFlags.split(' ') } : {}),
        ...(exact ? { exact: true } : {}),
        searchUrl: searxng.url,
      });
      systems.push(svc);
    } catch (error) {
      const message = `svc left out: ${(error as Error).message}`;
      notes.push(message);
      say(`bench: ${message}`);
    }
  }
  if (wanted('svc-libs')) {
    svcLibs = await startSvc(upstream, logOf('svc-libs'), {
      ...(svcLogLevel ? { logLevel: svcLogLevel } : {}),
      ...(svcNodeFlags ? { nodeFlags: svcNodeFlags.split(' ') } : {}),
      ...(exact ? { exact: true } : {}),
      gateway: LIBRARY_PATH,
      name: 'svc-libs',
    });
    systems.push(svcLibs);
  }
  say(`bench: systems ${systems.map((s) => `${s.name} (pid ${s.pid})`).join(', ')}`);

  // Upstream tokens emitted while each svc was being measured, for its ledger check (each has its own database).
  const ledgers = new Map<string, { system: SvcSystem; tokens: UpstreamStats; gap: number }>();
  for (const system of [svc, svcLibs]) if (system) ledgers.set(system.name, { system, tokens: { requests: 0, promptTokens: 0, completionTokens: 0, aborted: 0 }, gap: 0 });
  const measure = async (scenario: Scenario, system: System) => {
    const ledger = ledgers.get(system.name);
    const before = ledger ? await upstream.stats() : undefined;
    const metrics = await scenario.run(system);
    if (before && ledger) {
      // An overloaded system keeps forwarding requests its clients gave up on: wait until the upstream
      // is quiet, so everything svc sent for this scenario is counted as svc's.
      ledger.tokens = statsSum(ledger.tokens, statsDelta(before, await quietStats(upstream)));
      // Per scenario, so a ledger gap points at the traffic that caused it.
      const rows = await ledger.system.ledgerRows(ledger.tokens.requests);
      if (rows !== ledger.tokens.requests - ledger.gap) {
        const note = `${system.name} ledger gap after ${scenario.id}: ${rows} rows for ${ledger.tokens.requests} upstream requests so far`;
        notes.push(note);
        say(`bench: ${note}`);
        ledger.gap = ledger.tokens.requests - rows; // report each gap once, where it appeared
      }
    }
    return metrics;
  };

  const perRound: Rounds = {};
  const list = scenarios(params).filter((s) => !onlyScenarios || onlyScenarios.some((id) => s.id === id || s.id.startsWith(`${id}.`)));
  for (let round = 0; round < rounds; round++) {
    const order = systems.map((_, i) => systems[(i + round) % systems.length]!);
    for (const scenario of list) {
      await upstream.setScript(scenario.script);
      for (const system of order) {
        const t0 = Date.now();
        const metrics = await measure(scenario, system);
        const runs = (perRound[system.name] ??= []);
        runs[round] = { ...runs[round], ...metrics };
        say(`round ${round + 1}/${rounds} ${scenario.id.padEnd(7)} ${system.name.padEnd(11)} ${brief(metrics)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
  const open = openStreamsScenario(params);
  await upstream.setScript(open.script);
  for (const system of systems.filter((s) => s.name !== 'direct' && (!onlyScenarios || onlyScenarios.includes('s5')))) {
    const metrics = await measure(open, system);
    // Measured once; copied into every round (a run of `--scenarios=s5` alone has no rounds yet).
    const runs = (perRound[system.name] ??= []);
    if (runs.length === 0) runs.push({});
    for (const r of runs) Object.assign(r, metrics);
    say(`once    ${open.id} ${system.name.padEnd(11)} ${brief(metrics)}`);
  }

  const summary = summarise(perRound);
  const delivered = ledgers.size > 0 ? await upstream.delivered() : [];
  // Both svc systems send their request ids upstream: each is checked against the replies the other did not bill.
  const othersOf = async (other: SvcSystem | undefined) => (other ? await other.requestIds() : new Set<string>());
  const deliveredTo = (others: Set<string>) => delivered.filter(([requestId]) => !others.has(requestId));
  const ledger = svc ? await svc.ledgerCheck(ledgers.get('svc')!.tokens, deliveredTo(await othersOf(svcLibs))) : undefined;
  const libsLedger = svcLibs ? await svcLibs.ledgerCheck(ledgers.get('svc-libs')!.tokens, deliveredTo(await othersOf(svc))) : undefined;
  // After the ledger check: search turns are billed without a chat upstream request.
  let search: Record<string, number> | undefined;
  if (svc && (!onlyScenarios || onlyScenarios.includes('search'))) {
    search = await searchScenario(svc, searxng.url, params.search.count, params.search.warmup);
    say(`once    search  svc         ${brief(search)}`);
  }
  const targetList = targets(summary);
  const abList = libraryAb(summary);
  const machineAfter = machine();
  say('');
  say(printTable(summary, params.s2.rates, params.s4.concurrency));
  say('');
  if (targetList.length) say(printTargets(targetList));
  if (ledger) say(`${ledger.ok ? 'MET   ' : 'MISSED'}  ledger: ${ledger.message}`);
  if (ledger && !ledger.ok) say(`        ledger rows by stream/status/estimated: ${JSON.stringify(ledger.ledger.breakdown)}`);
  if (libsLedger) say(`${libsLedger.ok ? 'MET   ' : 'MISSED'}  svc-libs ledger: ${libsLedger.message}`);
  if (abList.length) say(`\nsvc's own lane + pool against Fastify + undici (svc-libs), the libraries within 10 %:\n${printTargets(abList)}`);
  if (search) say(`\n${printSearch(search)}`);
  say(`\nload average before ${machineBefore.loadavg.join(' ')}, after ${machineAfter.loadavg.join(' ')}; ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
  for (const note of notes) say(`note: ${note}`);
  const file = resolve(outDir, `${stamp}.json`);
  writeFileSync(
    file,
    JSON.stringify({ startedAt: new Date(startedAt).toISOString(), mode: quick ? 'quick' : 'full', rounds, params, machine: { ...machineBefore, loadavgAfter: machineAfter.loadavg }, pinned: hasTaskset, summary, targets: targetList, libraryAb: abList, ledger, libsLedger, search, notes, perRound }, null, 2),
  );
  say(`bench: wrote ${file}`);
} finally {
  for (const system of systems.reverse()) await system.stop().catch(() => undefined);
  await upstream.stop();
  await searxng.close();
}

function brief(metrics: Record<string, number>): string {
  return Object.entries(metrics)
    .map(([k, v]) => `${k.slice(k.lastIndexOf('.') + 1)}=${k.endsWith('Us') ? `${(v / 1000).toFixed(3)}ms` : Number.isInteger(v) ? v : v.toFixed(3)}`)
    .join(' ');
}
