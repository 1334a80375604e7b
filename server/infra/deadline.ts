/** A missed deadline, told apart from the awaited work's own failure. */
export class DeadlineError extends Error {}

/**
 * The deadline is counted in steps of at most this long; a step whose timer fires late (the event loop was
 * busy, say answering thousands of subscriptions at once) counts for at most `STALL_CREDIT` steps.
 */
const STEP_MS = 100;
const STALL_CREDIT = 2;

/**
 * `promise`, or a `DeadlineError` ("<what> did not answer within <ms> ms") if it takes longer than `ms`.
 *
 * `ms` is time the event loop could run, not wall-clock time: a plain timer that fires after the loop was
 * blocked for longer than `ms` rejects before the poll phase has read a reply that arrived meanwhile — a
 * healthy database judged dead because this process was busy (and admission then failing closed). So the
 * deadline advances in short steps, a late step counts for no more than `STALL_CREDIT` steps, and the
 * verdict is given only after one more turn of the loop (`setImmediate`, after the poll phase), so a reply
 * already on the socket settles first. A dependency that really stopped answering is still told after `ms`
 * plus the time the loop was blocked.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let counted = 0;
    let armedAt = 0;
    let step = 0;
    const arm = () => {
      step = Math.max(1, Math.min(STEP_MS, ms - counted));
      armedAt = performance.now();
      timer = setTimeout(fired, step);
    };
    const fired = () => {
      counted += Math.min(performance.now() - armedAt, step * STALL_CREDIT);
      if (counted < ms) return arm();
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new DeadlineError(`${what} did not answer within ${ms} ms`));
      });
    };
    const settle = () => {
      settled = true;
      clearTimeout(timer);
    };
    promise.then(
      (value) => {
        if (settled) return;
        settle();
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settle();
        reject(error as Error);
      },
    );
    arm();
  });
}
