/**
 * Shutdown steps with a deadline. `app.close()` must finish even when one resource does not answer (a
 * database pool still lending a connection, a Redis that stopped replying): each step gets a deadline,
 * and a step that misses it is logged by name and left behind, so the next ones still run.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

export const shutdownStepMs = 10_000;

/** Runs `step`; resolves when it settles or after `ms`, whichever comes first. Never rejects. */
export async function closeWithin(log: Logger | FastifyBaseLogger, name: string, step: () => Promise<unknown> | unknown, ms = shutdownStepMs): Promise<'done' | 'timed-out'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timed-out'>((resolve) => {
    timer = setTimeout(() => resolve('timed-out'), ms);
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
  if (outcome === 'timed-out') log.error({ step: name, ms }, `shutdown: ${name} did not finish within ${ms} ms; moving on`);
  return outcome;
}
