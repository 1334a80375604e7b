/**
 * Who took the core: S1's sequential requests in alternated blocks (passthrough, svc, svc, passthrough, …)
 * under `perf sched record`, then, for each system's blocks, how long three threads were runnable but
 * waiting for a CPU, and what ran on that CPU instead:
 * - the system's main thread (on the system-under-test core),
 * - the load generator's and the upstream's main threads (on the load core).
 * A request is slow when any of the three waits. This names what a CPU profile cannot: the time a process
 * was off the CPU (as when PostgreSQL, writing svc's ledger, runs on svc's core).
 *
 *   node test/bench/sched.ts [blocks=10] [--requests=1000]
 *
 * Needs `perf` (Debian: `linux-perf`) and the right to trace the scheduler (root, or
 * `kernel.perf_event_paranoid` ≤ -1). Timestamps are CLOCK_MONOTONIC on both sides (`perf -k`,
 * `process.hrtime`), so each wait is matched to the block it fell in.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sequential } from './load.ts';
import { pinSelf } from './procs.ts';
import { percentile, plainBody } from './scenarios.ts';
import { startSvc } from './svc.ts';
import { LOAD_CORE, startPassthrough, startUpstream, type System } from './systems.ts';

const blockCount = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 10);
const requests = Number(process.argv.find((arg) => arg.startsWith('--requests='))?.slice('--requests='.length) ?? 1000);
const SLOW_US = 2000;
const LONG_WAIT_NS = 500_000;

if (spawnSync('perf', ['--version'], { stdio: 'ignore' }).status !== 0) throw new Error('sched.ts needs perf (Debian: apt-get install linux-perf)');

interface Block {
  system: string;
  startNs: number;
  endNs: number;
  p50Us: number;
  p99Us: number;
  slow: number;
}

pinSelf(LOAD_CORE);
const upstream = await startUpstream('/dev/null');
await upstream.setScript({ latencyMs: 0 });
const systems: System[] = [await startPassthrough(upstream, '/dev/null'), await startSvc(upstream, '/dev/null')];
const dir = mkdtempSync(join(tmpdir(), 'svc-sched-'));
const blocks: Block[] = [];
let lines: string[];
try {
  for (const system of systems) await sequential(system.target(false), plainBody, 3000, 0); // warm-up
  const perf = spawn('perf', ['sched', 'record', '-k', 'CLOCK_MONOTONIC', '-o', join(dir, 'perf.data')], { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, 1000)); // perf's buffers set up
  for (let i = 0; i < blockCount; i++) {
    for (const system of i % 2 === 0 ? systems : [...systems].reverse()) {
      const startNs = Number(process.hrtime.bigint());
      const r = await sequential(system.target(false), plainBody, requests, 0);
      const endNs = Number(process.hrtime.bigint());
      blocks.push({ system: system.name, startNs, endNs, p50Us: percentile(r.latenciesUs, 50), p99Us: percentile(r.latenciesUs, 99), slow: r.latenciesUs.filter((us) => us > SLOW_US).length });
    }
  }
  await new Promise((resolve) => {
    perf.once('exit', resolve);
    perf.kill('SIGINT');
  });
  const script = spawnSync('perf', ['script', '-i', join(dir, 'perf.data'), '-F', 'comm,pid,tid,cpu,time,event,trace'], { encoding: 'utf8', maxBuffer: 2 ** 30 });
  lines = script.stdout.split('\n');
  if (!lines.some((line) => line.includes('sched:sched_switch'))) {
    throw new Error(`perf recorded no scheduler events (it needs root or kernel.perf_event_paranoid <= -1): ${script.stderr.trim().slice(0, 300)}`);
  }
} finally {
  for (const system of systems) await system.stop();
  await upstream.stop();
  rmSync(dir, { recursive: true, force: true });
}

// One pass over the events: per CPU, which thread ran when; per watched thread, each wait from runnable
// (woken or preempted) to running; and each thread's process, to name the threads afterwards.
interface Slice {
  fromNs: number;
  toNs: number;
  tid: number;
  comm: string;
}
const EVENT = /^\s*(.+?)\s+(\d+)\/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(sched:\S+):\s+(.*)$/;
const SWITCH = /prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)/;
const processOf = new Map<number, number>();
const slices = new Map<number, Slice[]>();
const running = new Map<number, { tid: number; comm: string; sinceNs: number }>();
const watched = [process.pid, upstream.pid, ...systems.map((s) => s.pid)];
const waitingSince = new Map<number, number>();
const waits: { tid: number; cpu: number; fromNs: number; toNs: number }[] = [];
for (const line of lines) {
  const match = EVENT.exec(line);
  if (!match) continue;
  const [event, tid, cpu, atNs] = [match[6]!, Number(match[3]), Number(match[4]), Math.round(Number(match[5]) * 1e9)];
  processOf.set(tid, Number(match[2]));
  // A thread seen running is not waiting (a wake-up can reach a thread before it has left its CPU).
  if (event !== 'sched:sched_switch') waitingSince.delete(tid);
  if (event === 'sched:sched_waking') {
    const woken = Number(/ pid=(\d+)/.exec(match[7]!)?.[1]);
    if (watched.includes(woken) && !waitingSince.has(woken)) waitingSince.set(woken, atNs);
  } else if (event === 'sched:sched_switch') {
    const fields = SWITCH.exec(match[7]!);
    if (!fields) continue;
    const [prevTid, prevState, nextComm, nextTid] = [Number(fields[2]), fields[3]!, fields[4]!, Number(fields[5])];
    const now = running.get(cpu);
    if (now) (slices.get(cpu) ?? slices.set(cpu, []).get(cpu)!).push({ fromNs: now.sinceNs, toNs: atNs, tid: now.tid, comm: now.comm });
    running.set(cpu, { tid: nextTid, comm: nextComm, sinceNs: atNs });
    if (watched.includes(prevTid)) {
      if (prevState.startsWith('R')) waitingSince.set(prevTid, atNs); // preempted: still runnable
      else waitingSince.delete(prevTid); // asleep until its next wake-up
    }
    const since = waitingSince.get(nextTid);
    if (since !== undefined) {
      waits.push({ tid: nextTid, cpu, fromNs: since, toNs: atNs });
      waitingSince.delete(nextTid);
    }
  }
}

// Who a thread is: a role for the processes of this run, else its command name with digits folded.
const roles = new Map<number, string>([[process.pid, 'load'], [upstream.pid, 'upstream'], ...systems.map((s) => [s.pid, s.name] as [number, string])]);
const label = (slice: Slice) => {
  const role = roles.get(processOf.get(slice.tid) ?? -1);
  return role ? `${role} ${slice.comm}` : slice.comm.replace(/\d+/g, 'N');
};

/** What ran on `cpu` between two instants, in ns by who. */
function ranInstead(cpu: number, fromNs: number, toNs: number, into: Map<string, number>): void {
  for (const slice of slices.get(cpu) ?? []) {
    if (slice.toNs <= fromNs || slice.fromNs >= toNs) continue;
    const who = label(slice);
    into.set(who, (into.get(who) ?? 0) + Math.min(slice.toNs, toNs) - Math.max(slice.fromNs, fromNs));
  }
}

const ms = (ns: number) => (ns / 1e6).toFixed(1);
for (const system of systems) {
  const mine = blocks.filter((b) => b.system === system.name);
  console.log(`\n${system.name}: ${mine.length} blocks of ${requests}; p50 ${mine.map((b) => Math.round(b.p50Us)).join(' ')} µs; p99 ${mine.map((b) => Math.round(b.p99Us)).join(' ')} µs; over ${SLOW_US / 1000} ms: ${mine.map((b) => b.slow).join(' ')} (${mine.reduce((total, b) => total + b.slow, 0)} in all)`);
  for (const [who, tid] of [[`${system.name} main thread`, system.pid], ['load generator', process.pid], ['upstream', upstream.pid]] as const) {
    let total = 0;
    let long = 0;
    let longTotal = 0;
    const instead = new Map<string, number>();
    for (const wait of waits) {
      if (wait.tid !== tid || !mine.some((b) => wait.fromNs >= b.startNs && wait.toNs <= b.endNs)) continue;
      total += wait.toNs - wait.fromNs;
      if (wait.toNs - wait.fromNs < LONG_WAIT_NS) continue;
      long++;
      longTotal += wait.toNs - wait.fromNs;
      ranInstead(wait.cpu, wait.fromNs, wait.toNs, instead);
    }
    const top = [...instead].sort((a, b) => b[1] - a[1]).slice(0, 6);
    console.log(`  ${who}: waited ${ms(total)} ms for a CPU; ${long} waits over ${LONG_WAIT_NS / 1e6} ms (${ms(longTotal)} ms), while there ran: ${top.map(([name, ns]) => `${name} ${ms(ns)}`).join(', ')}`);
  }
}
