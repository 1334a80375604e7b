/** A missed deadline, told apart from the awaited work's own failure. */
export class DeadlineError extends Error {}

/** `promise`, or a `DeadlineError` ("<what> did not answer within <ms> ms") if it takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
