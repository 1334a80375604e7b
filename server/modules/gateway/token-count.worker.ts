/**
 * The token-counting worker (token-count.ts starts it): counts what settlement bills off the event loop, with
 * the same estimate the main thread would use, so a count is the same whichever thread made it.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { estimateGroups, tokenizer } from './token-estimate.ts';

// The lowest priority, for this thread only (on Linux, setpriority of "the calling process" is the calling
// thread; elsewhere it would be the whole process, so not there). Sharing a core with the event loop, at the
// same priority a request that arrived while an answer was being counted waited for the scheduler's slice
// (`--paths=requests`, svc on one core: search less chat +0.50 → +0.76 ms); at 19 it takes the core at once.
if (process.platform === 'linux') setPriority(0, 19);

const count = await tokenizer();
parentPort!.on('message', ({ id, groups }: { id: number; groups: string[][] }) => {
  parentPort!.postMessage({ id, counts: estimateGroups(count, groups) });
});
