/**
 * Token counts for billing, made in a worker thread: the tokenizer takes milliseconds for a search answer
 * (~650 k instructions), and on the event loop every other request on the instance waited behind it.
 *
 * One worker per process, started by the first count (an instance whose upstreams report usage never
 * starts it, nor loads the tokenizer: ~40 MB), requests told apart by id. It holds the process open only
 * while it has counts to answer. A worker that cannot start, crashes or exits hands its counts back to this
 * thread (`estimateGroups` here, the same code), so a settlement is never lost nor left waiting; after a
 * failure the counts stay on this thread for a while rather than start a failing worker per count.
 * The worker runs at the lowest priority, so that on a core it shares with the event loop a request never
 * waits for it.
 */
import { Worker } from 'node:worker_threads';
import { estimateGroups, tokenizer } from './token-estimate.ts';

type Groups = readonly (readonly string[])[];

interface Pending {
  groups: Groups;
  resolve: (counts: number[][] | Promise<number[][]>) => void;
}

/** How long counts stay on this thread after the worker failed, before a new one is tried. */
const RETRY_MS = 60_000;
/**
 * Counts the worker may owe at once. It runs at the lowest priority (token-count.worker.ts): on a saturated
 * core it gets little time, and past this the counts are made here, as before it, so its queue, and how late
 * settlement comes, stay bounded.
 */
const MAX_PENDING = 64;

let worker: Worker | null = null;
const pending = new Map<number, Pending>();
let nextId = 0;
let failedAt = Number.NEGATIVE_INFINITY;

/**
 * Each group's texts counted in turn by one `TokenEstimate` (one budget): `estimateTokens([[query], [answer]])`
 * is `[[tokens of query], [tokens of answer]]`, each as `new TokenEstimate(count).count(text)` gives it.
 */
export function estimateTokens(groups: Groups): Promise<number[][]> {
  const thread = pending.size < MAX_PENDING ? (worker ?? start()) : null;
  if (!thread) return inThread(groups);
  const id = ++nextId;
  // Held open while counts are owed: a count awaited when nothing else keeps the loop alive still arrives.
  if (pending.size === 0) thread.ref();
  return new Promise((resolve) => {
    pending.set(id, { groups, resolve });
    thread.postMessage({ id, groups });
  });
}

/** Stops the worker (app close): counts it still owed are made on this thread. The next count starts a new one. */
export async function closeTokenWorker(): Promise<void> {
  const thread = worker;
  if (thread) await thread.terminate();
}

/** The running worker, if any: for tests. @internal */
export function tokenWorker(): Worker | null {
  return worker;
}

async function inThread(groups: Groups): Promise<number[][]> {
  return estimateGroups(await tokenizer(), groups);
}

function start(): Worker | null {
  if (performance.now() - failedAt < RETRY_MS) return null;
  let thread: Worker;
  try {
    // Flags of the main process (e.g. the heap sizes of `npm start`) are not all valid in a worker.
    thread = new Worker(new URL('./token-count.worker.ts', import.meta.url), { execArgv: [] });
  } catch {
    failedAt = performance.now();
    return null;
  }
  worker = thread;
  thread.unref();
  thread.on('message', ({ id, counts }: { id: number; counts: number[][] }) => {
    const request = pending.get(id);
    if (!request) return;
    pending.delete(id);
    if (pending.size === 0) thread.unref();
    request.resolve(counts);
  });
  thread.on('error', () => {
    failedAt = performance.now();
  });
  thread.on('exit', () => {
    if (worker === thread) worker = null;
    for (const request of pending.values()) request.resolve(inThread(request.groups));
    pending.clear();
  });
  return thread;
}
