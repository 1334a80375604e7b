/**
 * Shutdown with deadlines. `app.close()` must finish even when one resource does not answer (a database
 * pool still lending a connection, a Redis that stopped replying, a request that never ends): the HTTP
 * drain and each step get a deadline, and whatever misses it is logged (`shutdown: …`) and left behind.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { DeadlineError, withTimeout } from './deadline.ts';

const stepMs = 10_000;

/** Runs `step`; resolves when it settles or after 10 s, whichever comes first. Never rejects. */
export async function closeWithin(log: Logger | FastifyBaseLogger, name: string, step: () => Promise<unknown> | unknown): Promise<void> {
  try {
    await withTimeout(Promise.resolve().then(step), stepMs, `shutdown: ${name}`);
  } catch (error) {
    if (error instanceof DeadlineError) log.error({ step: name }, `${error.message}; moving on`);
    else log.warn({ err: error, step: name }, `shutdown: ${name} failed`);
  }
}

/**
 * `app.close()` waits for requests in flight (long streams too) before any onClose hook runs: after
 * `drainMs` the connections still open are cut.
 */
export function boundDrain(app: FastifyInstance, log: Logger | FastifyBaseLogger, drainMs: number): void {
  let timer: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    timer = setTimeout(() => {
      log.error(`shutdown: requests still open after ${drainMs} ms; closing their connections`);
      app.server.closeAllConnections();
    }, drainMs).unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearTimeout(timer);
    done();
  });
}
