/** Helpers for the result streams of subscriptions. */
import type { ExecutionResult } from 'graphql';

export function isAsyncIterable(value: unknown): value is AsyncIterable<ExecutionResult> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * Maps each item of a stream (a promised item is awaited). Not an async generator: a generator parked in `await source.next()` cannot
 * pass `return()` on until the next item comes, and a closed subscription must stop its source at once.
 */
export function mapIterator<T, U>(source: AsyncIterable<T>, map: (item: T) => U | Promise<U>): AsyncIterableIterator<U> {
  const iterator = source[Symbol.asyncIterator]();
  return {
    next: async () => {
      const step = await iterator.next();
      return step.done ? { done: true, value: undefined } : { done: false, value: await map(step.value) };
    },
    return: async () => {
      await iterator.return?.();
      return { done: true, value: undefined };
    },
    throw: async (error: unknown) => {
      if (iterator.throw) await iterator.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
