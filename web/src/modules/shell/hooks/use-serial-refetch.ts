/**
 * A refetch asked for by live events, one at a time. Apollo joins a refetch to an identical one still in
 * flight, so an event that arrives while a refetch runs would get the older answer and the last change
 * would never show; here such an event earns exactly one more refetch after the running one ends.
 */
import { useRef } from 'react';

export function useSerialRefetch(refetch: () => Promise<unknown>, onSettled?: () => void): () => void {
  const state = useRef({ running: false, again: false });
  // The latest closures, so a long-lived subscription callback never calls a stale one.
  const latest = useRef({ refetch, onSettled });
  latest.current = { refetch, onSettled };
  const run = (): void => {
    const current = state.current;
    if (current.running) {
      current.again = true;
      return;
    }
    current.running = true;
    void latest.current
      .refetch()
      .catch(() => undefined)
      .finally(() => {
        latest.current.onSettled?.();
        current.running = false;
        if (current.again) {
          current.again = false;
          run();
        }
      });
  };
  return run;
}
