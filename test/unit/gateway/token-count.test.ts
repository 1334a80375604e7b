/**
 * Token counts for settlement are made in a worker thread (token-count.ts), off the event loop. They must be
 * the counts the main thread would make, byte for byte (money), and a worker that crashes or is stopped must
 * hand its counts back to the main thread: a settlement is never lost, never left waiting.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closeTokenWorker, estimateTokens, tokenWorker } from '../../../server/modules/gateway/token-count.ts';
import { EXACT_CHARS, estimateGroups, TokenEstimate, tokenizer } from '../../../server/modules/gateway/token-estimate.ts';

const repo = resolve(import.meta.dirname, '../../..');

async function inThread(groups: string[][]): Promise<number[][]> {
  const count = await tokenizer();
  return groups.map((texts) => {
    const estimate = new TokenEstimate(count);
    return texts.map((text) => estimate.count(text));
  });
}

const answer = JSON.stringify({
  object: 'svc.search.v1',
  query: 'worker threads',
  results: Array.from({ length: 8 }, (_, i) => ({
    rank: i + 1,
    title: `Result ${i + 1}: “quotes”, emoji 🚀 and 中文标题`,
    url: `https://www.example.org/page/${i}?q=${'x'.repeat(i * 7)}`,
    snippet: 'Node.js worker threads run JavaScript in parallel. 工作线程并行运行。 '.repeat(i + 1),
  })),
  warnings: [],
});

/** Varied texts, each a group of its own, and groups sharing one budget. */
const groups: string[][] = [
  [answer],
  ['敏捷的棕色狐狸跳过了懒狗。'.repeat(300)],
  ['a'.repeat(5000)],
  [' '.repeat(700) + 'b'.repeat(70) + '\t\n'.repeat(90)],
  ['😀'.repeat(400) + 'x😀'.repeat(100)],
  // Over the budget: the rest billed at a token per UTF-8 byte.
  [answer.repeat(Math.ceil((EXACT_CHARS * 1.5) / answer.length))],
  // One budget across texts: the second crosses it, the third is past it.
  ['first '.repeat(5000), '第二'.repeat(EXACT_CHARS / 2), 'third text, wholly at the ceiling'],
  [''],
  [],
];

describe('the token-counting worker', () => {
  it('starts on the first count, not before, and counts exactly as the main thread does', async () => {
    expect(tokenWorker()).toBeNull();
    const counts = await estimateTokens(groups);
    expect(tokenWorker()).not.toBeNull();
    expect(counts).toEqual(await inThread(groups));
    expect(counts).toEqual(estimateGroups(await tokenizer(), groups));
    // Many counts in flight at once, each answered by its own id.
    const many = await Promise.all(groups.map((group) => estimateTokens([group])));
    expect(many).toEqual(await Promise.all(groups.map((group) => inThread([group]))));
  });

  it('more counts at once than the worker may owe: the rest are made on this thread, all exact', async () => {
    const texts = Array.from({ length: 300 }, (_, i) => `${answer.slice(i * 7)} ${'数'.repeat(i)}`);
    const counts = await Promise.all(texts.map((text) => estimateTokens([[text]])));
    expect(counts).toEqual(await Promise.all(texts.map((text) => inThread([[text]]))));
    expect(tokenWorker()).not.toBeNull();
  });

  it('does not hold the process open, yet a count awaited with nothing else running arrives', async () => {
    const script = `const { estimateTokens } = await import(${JSON.stringify(resolve(repo, 'server/modules/gateway/token-count.ts'))});
      console.log(JSON.stringify(await estimateTokens([['hello worker', 'again']])));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: repo });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const code = await new Promise<number | null>((done) => {
      const timer = setTimeout(() => child.kill(), 20_000);
      child.on('close', (exit) => {
        clearTimeout(timer);
        done(exit);
      });
    });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual(await inThread([['hello worker', 'again']]));
  });

  it('a worker stopped with counts in flight hands them to the main thread; the next count starts a new one', async () => {
    const first = tokenWorker() ?? (await estimateTokens([['warm']]), tokenWorker());
    const inFlight = estimateTokens(groups);
    await closeTokenWorker();
    expect(tokenWorker()).toBeNull();
    expect(await inFlight).toEqual(await inThread(groups));
    expect(await estimateTokens([[answer]])).toEqual(await inThread([[answer]]));
    expect(tokenWorker()).not.toBeNull();
    expect(tokenWorker()).not.toBe(first);
  });

  it('a worker that crashes hands its counts to the main thread, which then counts alone for a while', async () => {
    await estimateTokens([['warm']]);
    const worker = tokenWorker()!;
    const exited = new Promise((done) => worker.once('exit', done));
    // A message it cannot count throws in the worker: an uncaught error ends the thread.
    worker.postMessage({ id: -1, groups: null });
    const inFlight = estimateTokens(groups);
    expect(await inFlight).toEqual(await inThread(groups));
    await exited;
    expect(tokenWorker()).toBeNull();
    expect(await estimateTokens([[answer], ['敏捷']])).toEqual(await inThread([[answer], ['敏捷']]));
    expect(tokenWorker()).toBeNull();
  });
});
