/**
 * Shutdown with deadlines. `app.close()` must finish even when one resource does not answer (a database
 * pool still lending a connection, a Redis that stopped replying, a request that never ends): the HTTP
 * drain and each step get a deadline, and whatever misses it is logged (`shutdown: …`) and left behind.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

const stepMs = 10_000;

/** Runs `step`; resolves when it settles or after 10 s, whichever comes first. Never rejects. */
export async function closeWithin(log: Logger | FastifyBaseLogger, name: string, step: () => Promise<unknown> | unknown): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timed-out'>((resolve) => {
    timer = setTimeout(() => resolve('timed-out'), stepMs);
  });
  const work = (async () => {
    try {
      await step();
    } catch (error) {
      log.warn({ err: error, step: name }, `shutdown: ${name} failed`);
    }
    return 'done' as const;
  })();
  const outcome = await Promise.race([work, deadline]).finally(() => clearTimeout(timer));
  if (outcome === 'timed-out') log.error({ step: name }, `shutdown: ${name} did not finish within ${stepMs} ms; moving on`);
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
