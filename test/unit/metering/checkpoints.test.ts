/**
 * The crash checkpoints' rounds: a stream is written at its first token (within milliseconds, batched with
 * the others that started, and those alone), then only when its count moved; one store call per round for all of them; a
 * round the store refused is written by the next.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Checkpointer } from '../../../server/metering/checkpoints.ts';
import type { LedgerEntry } from '../../../server/metering/ledger.ts';
import type { PoolStore, ReservationRef } from '../../../server/metering/pool.store.ts';
import type { Metered, Turn } from '../../../server/metering/turn.ts';

type Written = { ref: ReservationRef; entry: LedgerEntry }[];

/** The part of a pool store the checkpointer calls, recording each call (and refusing the ones asked to). */
function recordingStore(): { store: PoolStore; calls: Written[]; refuseNext: () => void } {
  const calls: Written[] = [];
  let refuse = false;
  const store = {
    checkpoint: async (items: Written) => {
      if (refuse) {
        refuse = false;
        throw new Error('Redis refused');
      }
      calls.push([...items]);
    },
  } as unknown as PoolStore;
  return { store, calls, refuseNext: () => (refuse = true) };
}

function stream(id: string): { turn: Turn; delivered: { tokens: number } } {
  const turn = { id, output: false, settled: false, ref: { requestId: id } as ReservationRef } as Turn;
  return { turn, delivered: { tokens: 0 } };
}

const entry = (turn: Turn, metered: Metered) => ({ requestId: turn.id, outputTokens: metered.outputTokens }) as LedgerEntry;
const written = (call: Written) => call.map((item) => `${item.entry.requestId}:${item.entry.outputTokens}`).sort();

describe('stream checkpoints', () => {
  it('writes each stream at its first token, then only when its count moved, in one call a round', async () => {
    const { store, calls, refuseNext } = recordingStore();
    const checkpoints = new Checkpointer(store, 1000, entry, pino({ level: 'silent' }));
    checkpoints.start();
    try {
      const streams = ['a', 'b', 'c'].map(stream);
      for (const { turn, delivered } of streams) checkpoints.track(turn, () => ({ inputTokens: 5, outputTokens: delivered.tokens }));
      // Two streams send their first token; the third has not started (nothing delivered: nothing to bill).
      for (const s of streams.slice(0, 2)) {
        s.turn.output = true;
        s.delivered.tokens = 1;
        checkpoints.firstToken();
      }
      await expect.poll(() => calls.length, { timeout: 500, interval: 5 }).toBe(1);
      expect(written(calls[0]!)).toEqual(['a:1', 'b:1']);

      // Only `a` moved: the next round writes it alone.
      streams[0]!.delivered.tokens = 40;
      expect(await checkpoints.checkpoint()).toBe(1);
      expect(written(calls[1]!)).toEqual(['a:40']);
      expect(await checkpoints.checkpoint()).toBe(0);
      expect(calls).toHaveLength(2);

      // The third starts: its first-token round writes it alone, though `b` has moved too (the interval's).
      streams[2]!.turn.output = true;
      streams[2]!.delivered.tokens = 1;
      streams[1]!.delivered.tokens = 3;
      checkpoints.firstToken();
      await expect.poll(() => calls.length, { timeout: 500, interval: 5 }).toBe(3);
      expect(written(calls[2]!)).toEqual(['c:1']);
      expect(await checkpoints.checkpoint()).toBe(1);
      expect(written(calls[3]!)).toEqual(['b:3']);

      // A refused round is not counted as written: the next one writes the same streams.
      streams[1]!.delivered.tokens = 7;
      refuseNext();
      expect(await checkpoints.checkpoint()).toBe(0);
      expect(await checkpoints.checkpoint()).toBe(1);
      expect(written(calls[4]!)).toEqual(['b:7']);

      // A settled stream is never written again; an untracked one is gone.
      streams[0]!.turn.settled = true;
      streams[0]!.delivered.tokens = 50;
      checkpoints.untrack(streams[1]!.turn);
      streams[1]!.delivered.tokens = 9;
      expect(await checkpoints.checkpoint()).toBe(0);
    } finally {
      checkpoints.close();
    }
  });
});
