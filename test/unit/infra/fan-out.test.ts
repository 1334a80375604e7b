/**
 * A message for an id with thousands of watchers wakes them a slice at a time, with the event loop's other
 * work between slices, and every watcher still gets the message's generation.
 */
import { createPubSub } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { FanOut } from '../../../server/infra/fan-out.ts';

describe('FanOut', () => {
  it('wakes thousands of watchers of one id in slices, letting other work run between them', async () => {
    const pubsub = createPubSub<Record<string, [{ ids: string[] }]>>();
    const fanOut = new FanOut(pubsub, 'changed', (message: { ids: string[] }) => message.ids);
    fanOut.start();
    const WATCHERS = 2000;
    const generations: number[][] = [];
    let woken = 0;
    let wokenWhenOtherWorkRan: number | undefined;
    const watchers = Array.from({ length: WATCHERS }, (_, i) => {
      generations[i] = [];
      const watch = fanOut.watch('acct');
      void (async () => {
        for await (const generation of watch) {
          generations[i]!.push(generation);
          if (generations[i]!.length < 2) continue;
          // The first wake-up of the message: something else wants the loop now (a ping's reply, say).
          if (woken++ === 0) setImmediate(() => (wokenWhenOtherWorkRan = woken));
        }
      })();
      return watch;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    fanOut.publish({ ids: ['acct'] });
    await new Promise<void>((resolve) => {
      const check = () => (woken === WATCHERS ? resolve() : setTimeout(check, 5));
      check();
    });
    expect(wokenWhenOtherWorkRan).toBeLessThan(WATCHERS / 2);
    expect(generations.every((list) => list.length === 2 && list[1] === 1)).toBe(true);
    for (const watch of watchers) await watch.return?.();
    await fanOut.close();
  });
});
