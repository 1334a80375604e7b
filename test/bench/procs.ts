/**
 * Child processes for the benchmark: each one pinned to a core with `taskset`, awaited until its port
 * answers, and killed when the runner exits for any reason (normal end, error, Ctrl-C, SIGTERM), so a run
 * never leaves processes behind. `taskset` execs the command, so the pid we hold is the program's own pid
 * (which is what /proc sampling in S5 needs).
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { openSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';

export interface Child {
  name: string;
  pid: number;
  proc: ChildProcess;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
  /** Sends `signal` on purpose (a drill's kill -9): its exit is not reported as unexpected. */
  kill(signal: NodeJS.Signals): void;
}

const live = new Set<Child>();
let hooked = false;

export const hasTaskset = spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  const killAll = () => {
    for (const child of live) {
      try {
        child.proc.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping child processes\n`);
      killAll();
      process.exit(130);
    });
  }
}

export interface SpawnOptions {
  /** CPU core to pin to (`taskset -c`); undefined = not pinned. */
  core?: number;
  env?: Record<string, string | undefined>;
  /** Where stdout/stderr go: a log file path, or 'inherit' / 'ignore'. */
  log?: string;
  /** Open an IPC channel (the command must be node). */
  ipc?: boolean;
  cwd?: string;
}

export function spawnPinned(name: string, command: string, args: string[], options: SpawnOptions = {}): Child {
  hookExit();
  const out = options.log === undefined || options.log === 'ignore' ? 'ignore' : options.log === 'inherit' ? 'inherit' : openSync(options.log, 'a');
  const stdio: StdioOptions = ['ignore', out, out];
  if (options.ipc) stdio.push('ipc');
  const [cmd, argv] = options.core !== undefined && hasTaskset ? ['taskset', ['-c', String(options.core), command, ...args]] : [command, args];
  const proc = spawn(cmd, argv, { stdio, env: { ...process.env, ...options.env }, cwd: options.cwd });
  if (proc.pid === undefined) throw new Error(`bench: could not start ${name} (${command})`);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let stopping = false;
  proc.once('exit', (code, signal) => {
    // Say so at once: another process on the machine may have killed it (the numbers after are void).
    if (!stopping) process.stderr.write(`bench: ${name} (pid ${proc.pid}) exited unexpectedly (${signal ?? `code ${code}`})\n`);
  });
  const child: Child = {
    name,
    pid: proc.pid,
    proc,
    kill(signal) {
      stopping = true;
      proc.kill(signal);
    },
    async stop(graceMs = 3000) {
      stopping = true;
      if (proc.exitCode !== null || proc.signalCode !== null) {
        live.delete(child);
        return;
      }
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
      live.delete(child);
    },
  };
  proc.once('exit', () => live.delete(child));
  live.add(child);
  return child;
}

/**
 * The command that runs node with `args`, under `wrap` when one is given (`instr.ts` runs the systems under
 * valgrind), and how long to wait for it to listen: ten times as long under a wrapper.
 */
export function nodeCommand(args: string[], wrap: readonly string[] = [], listenMs = 30_000): { command: string; args: string[]; listenMs: number } {
  if (wrap.length === 0) return { command: process.execPath, args, listenMs };
  return { command: wrap[0]!, args: [...wrap.slice(1), process.execPath, ...args], listenMs: listenMs * 10 };
}

/** A free TCP port on 127.0.0.1 (bound then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on the port; rejects if the child dies first. */
export async function waitForPort(port: number, child: Child, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(`bench: ${child.name} exited (code ${child.proc.exitCode ?? child.proc.signalCode}) before listening on ${port}`);
    }
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`bench: ${child.name} did not listen on ${port} within ${timeoutMs} ms`);
}

/**
 * Pins the calling process (the load generator) to a core: every thread it has (`-a`), not only the main
 * one. Without `-a`, its V8 and libuv threads, started before this call, stayed free to run on the core of
 * the system under test (`perf sched` saw them there). Threads started
 * later inherit the main thread's affinity.
 */
export function pinSelf(core: number): void {
  if (hasTaskset) spawnSync('taskset', ['-apc', String(core), String(process.pid)], { stdio: 'ignore' });
}

/** Resident set size and CPU time (user + system) of a process, from /proc. */
export interface ProcSample {
  rssKb: number;
  hwmKb: number;
  cpuMs: number;
}

const clockTicks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

export async function sampleProc(pid: number): Promise<ProcSample> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  // Fields after the command name (which may contain spaces) start at index 3; utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM'), cpuMs: (ticks * 1000) / clockTicks };
}

/**
 * Resident memory of a process by kind of mapping, from `/proc/<pid>/smaps`: the C allocator's main heap
 * (`[heap]`: sockets' read buffers, parsers, ArrayBuffer contents), other anonymous memory (V8's heap
 * pages, thread stacks, other threads' allocator arenas) and mapped files (Node's binary, libraries).
 */
export async function rssByMapping(pid: number): Promise<{ heapKb: number; anonymousKb: number; filesKb: number }> {
  const kb = { heapKb: 0, anonymousKb: 0, filesKb: 0 };
  let kind: keyof typeof kb = 'anonymousKb';
  for (const line of (await readFile(`/proc/${pid}/smaps`, 'utf8')).split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const name = header[1]!;
      kind = name === '[heap]' ? 'heapKb' : name === '' || name.startsWith('[') ? 'anonymousKb' : 'filesKb';
    } else if (line.startsWith('Rss:')) kb[kind] += Number(line.slice(4).trim().split(' ')[0]);
  }
  return kb;
}

/** CPU milliseconds of a process so far, every thread (clock ticks of 10 ms). */
export function threadsCpuMs(pid: number): number {
  let ticks = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / clockTicks;
}
