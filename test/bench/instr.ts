/**
 * Instructions per request, svc against the bare passthrough: a CPU measure that does not drift with the
 * VM's speed. On a shared VM the same build's CPU per chunk moves by a third from one run to the next, so a
 * change of a few percent cannot be seen in time; valgrind's callgrind counts instructions, and gives the same
 * count run after run.
 *
 *   node test/bench/instr.ts [s1|s4|paths] [--requests=1000] [--warm-up=5] [--systems=passthrough,svc] [--svc-node-flags=…] [--top=25] [--api=chat|messages|responses] [--by-thread]
 *
 * `s1`: sequential non-streaming chat requests (S1's body); `s4`: streams of 100 chunks, 10 at a time,
 * 50 ms apart (slow enough that each chunk is its own read under valgrind, which runs svc ~50× slower).
 * `--api=messages|responses` sends svc the same request through `POST /v1/messages` or `POST /v1/responses`
 * (`ab.ts`'s bodies; the passthrough still relays chat): what another API adds over chat, in instructions.
 * `paths`: one svc (no passthrough), chat then search over REST then search over MCP (paths.ts's calls), each
 * warmed up and counted on its own, one dump each: what a search costs over a chat turn, in the same process.
 * Each system runs under `valgrind --tool=callgrind` with counting off; after the warm-up (5× the measured
 * load) counting is switched on for the measured load and the counts are dumped. Every thread counts, the
 * garbage collector's and the compiler's too, as in the bench's CPU figures; the kernel's work does not.
 * `--by-thread` adds each thread's share (01 is the main thread, the one requests wait on): a worker's work
 * (the token-counting worker's) is CPU the instance spends, but not time the event loop is held.
 * Prints instructions per request (or per 1,000 chunks) by kind — JavaScript, V8's built-ins and runtime,
 * the garbage collector, the compiler, Node's C++, libuv, llhttp, libc — and the heaviest functions, with
 * JavaScript named through Node's `--perf-basic-prof` map.
 *
 * What is exact and what is not: the instructions a function takes per request are the same run after run,
 * so a change shows in its own lines (the stringifier went from 28 k to 9 k instructions per request when
 * the upstream body stopped being serialised). The totals are not: V8
 * keeps optimising and deoptimising code long after the warm-up, more so under valgrind, and the tier a
 * function runs in moves the built-ins' share: svc's S1 gave 527–642 k instructions per request without
 * the compiler over eight runs. The compiler is printed on its own line and left out of the second total.
 * Timers count too (sweeps, leases, pings): under valgrind a request takes ~50× its time, longer still on a
 * loaded machine, so their share per request grows with the machine's load — compare runs made alike.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { sequential, streams } from './load.ts';
import { pinSelf } from './procs.ts';
import { plainBody as plainChatBody, plainMessagesBody, plainResponsesBody, streamBody as streamChatBody, streamMessagesBody, streamResponsesBody } from './scenarios.ts';
import { searchCalls, sequentialCalls, type Call } from './search.ts';
import { startSvc } from './svc.ts';
import { startScriptedSearxng } from '../fixtures/scripted-searxng.ts';
import { LOAD_CORE, ROOT, startPassthrough, startUpstream, type System } from './systems.ts';

const mode = process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 's1';
if (mode !== 's1' && mode !== 's4' && mode !== 'paths') throw new Error('usage: node test/bench/instr.ts [s1|s4|paths] [--requests=1000] [--systems=passthrough,svc]');
const option = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const requests = Number(option('requests') ?? (mode === 's1' ? 1000 : 20));
const systems = (option('systems') ?? 'passthrough,svc').split(',');
const svcNodeFlags = (option('svc-node-flags') ?? '').split(' ').filter(Boolean);
const TOP = Number(option('top') ?? 25);
const api = option('api') ?? 'chat';
const bodies = {
  chat: { path: '/v1/chat/completions', plain: plainChatBody, stream: streamChatBody },
  messages: { path: '/v1/messages', plain: plainMessagesBody, stream: streamMessagesBody },
  responses: { path: '/v1/responses', plain: plainResponsesBody, stream: streamResponsesBody },
};
if (!Object.hasOwn(bodies, api)) throw new Error('--api= takes chat, messages or responses');
/** The API svc is called through (the passthrough only relays chat). */
const through = (system: System) => (system.name === 'svc' ? bodies[api as keyof typeof bodies] : bodies.chat);
const STREAMS_AT_ONCE = 10;
/** Warm-up, in measured loads (the compiler never quite stops under valgrind: see the header). */
const WARM_UP = Number(option('warm-up') ?? 5);
const CHUNKS = 100;
const OUT = resolve(ROOT, 'bench-results', 'callgrind');

if (spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status !== 0) throw new Error('instr.ts needs valgrind (apt-get install valgrind)');
pinSelf(LOAD_CORE);
rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const wrap = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${OUT}/callgrind.%p`];
// A dump per thread: what the event loop itself spends, apart from workers, the garbage collector's and the compiler's threads.
if (process.argv.includes('--by-thread')) wrap.push('--separate-threads=yes');

/** The measured load, `times` over: `requests` requests, or `requests` streams. Returns what one pass relays (requests or chunks). */
async function load(system: System, times: number): Promise<number> {
  const { path, plain, stream } = through(system);
  if (mode !== 's4') {
    await sequential({ ...system.target(false), path }, plain, requests * times, 0);
    return requests;
  }
  const result = await streams({ ...system.target(true), path }, stream, STREAMS_AT_ONCE, CHUNKS, { perWorker: Math.ceil((requests * times) / STREAMS_AT_ONCE), staggerMs: 50 * CHUNKS, skipFirst: false });
  return result.chunksRelayed / times;
}

function callgrind(command: string, pid: number): void {
  const result = spawnSync('callgrind_control', [command, String(pid)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`callgrind_control ${command} ${pid}: ${result.stderr || result.stdout}`);
}

/** JIT code's address ranges from `/tmp/perf-<pid>.map`, the latest code at an address winning. */
function jitNames(pid: number): (address: number) => string | undefined {
  const ranges = readFileSync(`/tmp/perf-${pid}.map`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [start, size, ...name] = line.split(' ');
      return { start: parseInt(start!, 16), end: parseInt(start!, 16) + parseInt(size!, 16), name: name.join(' ') };
    });
  return (address) => ranges.findLast((range) => range.start <= address && address < range.end)?.name.replace(`file://${ROOT}/`, '');
}

/** `???:ns::f(long, parameters) const [/path/to/object]` as `ns::f() [object]`. */
function nativeName(text: string): string {
  const name = text.replace(/^\?\?\?:/, '');
  const object = name.lastIndexOf(' [');
  let end = object === -1 ? name.length : object;
  while (end > 0 && name[end - 1] !== ')') end--;
  // The last balanced parenthesis group before the object is the parameter list.
  let depth = 0;
  let start = end - 1;
  for (; start >= 0; start--) {
    if (name[start] === ')') depth++;
    else if (name[start] === '(' && --depth === 0) break;
  }
  const fn = start > 0 ? `${name.slice(0, start)}()` : name.slice(0, object === -1 ? name.length : object);
  return object === -1 ? fn : `${fn} [${name.slice(name.lastIndexOf('/') + 1, -1)}]`;
}

const KINDS: [kind: string, test: RegExp][] = [
  ['garbage collector', /Scaveng|Marking|MarkCompact|Sweep|Evacuat|heap::|Heap::|MinorM|RememberedSet|IteratePointers|GCTracer|Compactor|WriteBarrier|RecordWrite/],
  ['compiler', /compiler::|maglev::|baseline::|Maglev|Turbofan|Compiler|BytecodeGenerator|internal::Parser|ParserBase|PreParser|Zone/],
  ['JavaScript', /^JS:/],
  ['V8 built-ins and runtime', /Builtins_|Builtin:|v8::|BytecodeHandler|Stub:/],
  ['llhttp', /llhttp/],
  ['libuv', /\buv_|uv__/],
  ['Node C++', /node::|napi_/],
  ['libc', /libc\.so|libstdc\+\+|libm\.so|ld-linux/],
];

function report(name: string, pid: number, units: number, nth = 1): string {
  // One dump, or with `--by-thread` one per thread (`….<nth>-<thread>`, the main thread 01).
  const dumps = readdirSync(OUT)
    .filter((file) => file === `callgrind.${pid}.${nth}` || file.startsWith(`callgrind.${pid}.${nth}-`))
    .sort();
  if (dumps.length === 0) throw new Error(`no callgrind dump for ${name} (pid ${pid}) in ${OUT}`);
  const jit = jitNames(pid);
  const byFunction = new Map<string, number>();
  const byThread = new Map<string, number>();
  for (const dump of dumps) {
    const annotated = spawnSync('callgrind_annotate', ['--threshold=100', resolve(OUT, dump)], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout;
    const thread = /-(\d+)$/.exec(dump)?.[1] ?? 'all';
    for (const line of annotated.split('\n')) {
      const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/.exec(line);
      if (!match || match[2] === 'PROGRAM TOTALS') continue;
      const count = Number(match[1]!.replaceAll(',', ''));
      const address = /^\?\?\?:0x([0-9a-f]+) \[\?\?\?\]$/.exec(match[2]!);
      const fn = address ? (jit(parseInt(address[1]!, 16)) ?? 'JS: (code no longer mapped)') : nativeName(match[2]!);
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + count);
      byThread.set(thread, (byThread.get(thread) ?? 0) + count);
    }
  }
  const perRequest = mode !== 's4';
  const scale = perRequest ? 1 / units : 1000 / units;
  const per = (count: number) => Math.round(count * scale).toLocaleString('en').padStart(perRequest ? 9 : 12);
  const byKind = new Map<string, number>();
  for (const [fn, count] of byFunction) {
    const kind = KINDS.find(([, test]) => test.test(fn))?.[0] ?? 'other';
    byKind.set(kind, (byKind.get(kind) ?? 0) + count);
  }
  const unit = perRequest ? 'request' : '1,000 chunks';
  const compiling = byKind.get('compiler') ?? 0;
  // The sum of the functions (`--threshold=100` lists them all): callgrind_annotate's PROGRAM TOTALS line of
  // a later dump of one process has been seen garbled (~9.2e16).
  const total = [...byFunction.values()].reduce((sum, count) => sum + count, 0);
  return [
    `${name}: ${per(total).trim()} instructions per ${unit}, ${per(total - compiling).trim()} without the compiler (${Math.round(units)} measured)`,
    ...(byThread.size > 1
      ? [
          '  by thread (01 is the main thread, the event loop):',
          ...[...byThread]
            .filter(([, count]) => count * scale >= 1000)
            .map(([thread, count]) => `${per(count)}  thread ${thread}`),
        ]
      : []),
    ...[...byKind].sort((a, b) => b[1] - a[1]).map(([kind, count]) => `${per(count)}  ${kind}`),
    '  heaviest:',
    ...[...byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([fn, count]) => `${per(count)}  ${fn}`),
    '',
  ].join('\n');
}

const upstream = await startUpstream('/dev/null');
await upstream.setScript(mode === 's4' ? { latencyMs: 0, chunks: CHUNKS, firstChunkDelayMs: 50, intervalMs: 50 } : { latencyMs: 0 });
// For the systems started from here on: their JIT code named in /tmp/perf-<pid>.map.
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --perf-basic-prof`.trim();
const totals: string[] = [];
try {
  if (mode === 'paths') await countPaths();
  else await countSystems();
} finally {
  await upstream.stop();
}
process.stdout.write(totals.join('\n') + '\n');

/** Chat, search over REST and search over MCP through one svc under callgrind, one dump each. */
async function countPaths(): Promise<void> {
  const searxng = await startScriptedSearxng();
  const svc = await startSvc(upstream, '/dev/null', { wrap, nodeFlags: svcNodeFlags, searchUrl: searxng.url });
  try {
    const search = searchCalls(svc, searxng.url);
    const calls: [string, Call][] = [
      ['chat', { origin: svc.origin, method: 'POST', path: '/v1/chat/completions', headers: svc.headers, body: plainChatBody, ok: (status) => status === 200 }],
      ['search.rest', search.rest],
      ['search.mcp', search.mcp],
    ];
    for (const [, call] of calls) await sequentialCalls(call, requests * WARM_UP, 0);
    let nth = 0;
    for (const [name, call] of calls) {
      callgrind('--instr=on', svc.pid);
      const { failures } = await sequentialCalls(call, requests, 0);
      callgrind('--dump', svc.pid);
      callgrind('--instr=off', svc.pid);
      // A search can time out under valgrind (~50× slower): a few such calls do not void the run's counts.
      if (failures > requests / 100) throw new Error(`${name}: ${failures} of ${requests} calls failed`);
      if (failures > 0) process.stderr.write(`${name}: ${failures} of ${requests} calls failed (counted)\n`);
      const text = report(name, svc.pid, requests, ++nth);
      totals.push(text.split('\n')[0]!);
      process.stdout.write(text + '\n');
    }
  } finally {
    await svc.stop();
    await searxng.close();
    rmSync(`/tmp/perf-${svc.pid}.map`, { force: true });
  }
}

async function countSystems(): Promise<void> {
  for (const name of systems) {
    const system = name === 'svc' ? await startSvc(upstream, '/dev/null', { wrap, nodeFlags: svcNodeFlags }) : await startPassthrough(upstream, '/dev/null', undefined, wrap);
    try {
      await load(system, WARM_UP);
      callgrind('--instr=on', system.pid);
      const units = await load(system, 1);
      callgrind('--dump', system.pid);
      const text = report(name === 'svc' && api !== 'chat' ? `svc through ${through(system).path}` : name, system.pid, units);
      totals.push(text.split('\n')[0]!);
      process.stdout.write(text + '\n');
    } finally {
      await system.stop();
      rmSync(`/tmp/perf-${system.pid}.map`, { force: true });
    }
  }
}
