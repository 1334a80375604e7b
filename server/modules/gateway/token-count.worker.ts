/**
 * The token-counting worker (token-count.ts starts it): counts what settlement bills off the event loop, with
 * the same estimate the main thread would use, so a count is the same whichever thread made it.
 */
import { parentPort } from 'node:worker_threads';
import { estimateGroups, tokenizer } from './token-estimate.ts';

const count = await tokenizer();
parentPort!.on('message', ({ id, groups }: { id: number; groups: string[][] }) => {
  parentPort!.postMessage({ id, counts: estimateGroups(count, groups) });
});
