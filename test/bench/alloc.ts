/**
 * What svc allocates per request, by site: a measure that does not drift with the VM's speed, unlike
 * time and CPU (the same build's CPU per chunk has moved by 30 % from one run to the next on a shared VM). Fewer bytes per request means fewer scavenges and less GC CPU under load.
 *
 *   node test/bench/alloc.ts [s1|s4] [--requests=3000] [--survivors]
 *
 * `s1`: sequential non-streaming chat requests (S1's body); `s4`: streams of 4 chunks, 20 at a time (the
 * start and end of a stream weigh most there). svc runs with the inspector on loopback; after 2,000 requests
 * of warm-up, V8's sampling heap profiler (every 512 bytes, collected objects included) records the
 * measured requests. Prints bytes per request by allocating function and by the nearest svc frame on the
 * stack (what in `server/` caused the allocation, wherever it happened).
 *
 * `--survivors` leaves out what a scavenge collected: what is left outlived its request long enough to be
 * promoted to the old generation (or is still live at the end), which is what makes scavenges slow and
 * mark-compacts frequent.
 *
 * `in-flight`: what a non-streaming request holds while it waits for its upstream, which is what S2's
 * slow upstream (and a real model server's seconds) keeps alive and tenures. `--requests` requests wait on a
 * 4 s upstream at once, over connections opened beforehand; the profile counts only objects still live
 * then, after a full collection, and `Runtime.getHeapUsage` gives the whole heap's growth per request.
 */
import { Client, Pool } from 'undici';
import { sequential, streams } from './load.ts';
import { freePort, pinSelf } from './procs.ts';
import { plainBody, streamBody } from './scenarios.ts';
import { startSvc } from './svc.ts';
import { LOAD_CORE, ROOT, startUpstream } from './systems.ts';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const mode = process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 's1';
if (mode !== 's1' && mode !== 's4' && mode !== 'in-flight') throw new Error('usage: node test/bench/alloc.ts [s1|s4|in-flight] [--requests=3000] [--survivors]');
const requests = Number(process.argv.find((arg) => arg.startsWith('--requests='))?.slice('--requests='.length) ?? (mode === 'in-flight' ? 1000 : 3000));
const survivors = process.argv.includes('--survivors');
const STREAMS_AT_ONCE = 20;

pinSelf(LOAD_CORE);
const upstream = await startUpstream('/dev/null');
await upstream.setScript(mode === 's4' ? { latencyMs: 0, chunks: 4, firstChunkDelayMs: 5, intervalMs: 5 } : { latencyMs: 0 });
const inspectPort = await freePort();
const svc = await startSvc(upstream, '/dev/null', { nodeFlags: [`--inspect=127.0.0.1:${inspectPort}`] });
const target = svc.target(mode === 's4');

async function load(count: number): Promise<void> {
  if (mode !== 's4') await sequential(target, plainBody, count, 0);
  else await streams(target, streamBody, STREAMS_AT_ONCE, 4, { perWorker: Math.ceil(count / STREAMS_AT_ONCE), staggerMs: 30, skipFirst: false });
}

/** The inspector protocol over its WebSocket: one call at a time is all this needs. */
interface Inspector {
  call(method: string, params?: object): Promise<Record<string, unknown>>;
  close(): void;
}

async function inspector(): Promise<Inspector> {
  const client = new Client(`http://127.0.0.1:${inspectPort}`);
  const response = await client.request({ method: 'GET', path: '/json/list' });
  const [first] = (await response.body.json()) as { webSocketDebuggerUrl: string }[];
  await client.close();
  const socket = new WebSocket(first!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let next = 0;
  const waiting = new Map<number, (result: Record<string, unknown>) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: Record<string, unknown> };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result ?? {});
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve) => {
        const id = ++next;
        waiting.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/**
 * `requests` requests at once on a 4 s upstream, sampled while they wait: live objects only, after a full
 * collection. Returns the profile and the heap's growth (what `getHeapUsage` counts, sampled or not).
 */
async function inFlight(session: Inspector): Promise<{ profile: { head: ProfileNode }; heapGrowth: number }> {
  const pool = new Pool(target.origin, { connections: requests, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const batch = () => Promise.all(Array.from({ length: requests }, () => pool.request({ method: 'POST', path: target.path, headers: target.headers, body: plainBody }).then((r) => r.body.dump())));
  try {
    // Every connection open (and svc's side of it settled) before measuring: the requests are what is counted.
    await upstream.setScript({ latencyMs: 300 });
    await batch();
    await batch();
    await upstream.setScript({ latencyMs: 4000 });
    await session.call('HeapProfiler.collectGarbage');
    const before = (await session.call('Runtime.getHeapUsage')) as { usedSize: number };
    await session.call('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: false, includeObjectsCollectedByMinorGC: false });
    const waiting = batch();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await session.call('HeapProfiler.collectGarbage');
    const during = (await session.call('Runtime.getHeapUsage')) as { usedSize: number };
    const { profile } = (await session.call('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
    await waiting;
    return { profile, heapGrowth: during.usedSize - before.usedSize };
  } finally {
    await pool.close();
  }
}

try {
  await load(2000);
  const session = await inspector();
  await session.call('HeapProfiler.enable');
  let profile: { head: ProfileNode };
  let heapGrowth = NaN;
  if (mode === 'in-flight') ({ profile, heapGrowth } = await inFlight(session));
  else {
    await session.call('HeapProfiler.startSampling', { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !survivors });
    await load(requests);
    ({ profile } = (await session.call('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } });
  }
  session.close();

  const byFunction = new Map<string, number>();
  const bySvcFrame = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode, svcFrame: string) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${url.replace(`file://${ROOT}/`, '')}:${lineNumber + 1}`;
    const frame = url.includes(`${ROOT}/server/`) ? name : svcFrame;
    total += node.selfSize;
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
    bySvcFrame.set(frame, (bySvcFrame.get(frame) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child, frame);
  };
  walk(profile.head, '(no svc frame on the stack)');
  const perRequest = (bytes: number) => `${(bytes / requests / 1024).toFixed(2)} KB`.padStart(9);
  const top = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([name, bytes]) => `${perRequest(bytes)}  ${name}`);
  const what = { s1: 'non-streaming request', s4: 'stream of 4 chunks', 'in-flight': 'request waiting on its upstream' }[mode];
  const how = mode === 'in-flight' ? `live (sampled; the whole heap grew ${perRequest(heapGrowth).trim()})` : survivors ? 'outlived a scavenge' : 'allocated';
  process.stdout.write(
    [`${perRequest(total).trim()} ${how} per ${what} (${requests} measured)`, '', 'by allocating function:', ...top(byFunction), '', 'by nearest svc frame:', ...top(bySvcFrame), ''].join('\n'),
  );
} finally {
  await svc.stop();
  await upstream.stop();
}
