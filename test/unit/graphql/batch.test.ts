/**
 * `batched` (server/graphql-core/batch.ts): the keys sibling resolvers ask in one tick of one operation go to
 * one load, each caller gets its own key's value, a key asked twice is loaded once, another operation (context)
 * or a later tick loads on its own, and a failed load fails every caller of that batch.
 */
import { describe, expect, it } from 'vitest';
import { batched } from '../../../server/graphql-core/batch.ts';

function recorder() {
  const calls: string[][] = [];
  const load = async (keys: readonly string[]) => {
    calls.push([...keys]);
    return keys.map((key) => key.toUpperCase());
  };
  return { calls, load };
}

describe('batched', () => {
  it('loads the keys asked in one tick together, once each, and answers each caller its own', async () => {
    const { calls, load } = recorder();
    const context = {};
    const answers = await Promise.all(['a', 'b', 'a', 'c'].map((key) => batched(context, 'letters', load, key)));
    expect(answers).toEqual(['A', 'B', 'A', 'C']);
    expect(calls).toEqual([['a', 'b', 'c']]);
  });

  it('collects callers that awaited something already settled before asking', async () => {
    const { calls, load } = recorder();
    const context = {};
    const late = async (key: string) => {
      await Promise.resolve();
      await Promise.resolve();
      return batched(context, 'letters', load, key);
    };
    expect(await Promise.all([batched(context, 'letters', load, 'x'), late('y')])).toEqual(['X', 'Y']);
    expect(calls).toEqual([['x', 'y']]);
  });

  it('keeps operations, names and ticks apart', async () => {
    const { calls, load } = recorder();
    const one = {};
    const two = {};
    await Promise.all([batched(one, 'letters', load, 'a'), batched(two, 'letters', load, 'b'), batched(one, 'other', load, 'c')]);
    await batched(one, 'letters', load, 'd');
    expect(calls).toEqual([['a'], ['b'], ['c'], ['d']]);
  });

  it('fails every caller of a batch whose load failed', async () => {
    const context = {};
    const load = async () => {
      throw new Error('database away');
    };
    const results = await Promise.allSettled([batched(context, 'letters', load, 'a'), batched(context, 'letters', load, 'b')]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });
});
