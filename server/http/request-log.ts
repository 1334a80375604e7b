import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/**
 * One log line per request, written when it completes (method, URL, status, time and the request id),
 * instead of Fastify's two. The line is built from named fields only (no headers, no body), so it goes
 * through `fixedFieldLogger` without a redaction pass: on the chat hot path redaction and Fastify's
 * request serializer cost as much CPU as the Redis admission.
 */
export class OneLinePerRequest extends LogController {
  readonly #log: Logger;

  constructor(log: Logger) {
    super({ requestIdLogLabel: 'requestId' });
    this.#log = log;
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const statusCode = reply.statusCode;
    const req = { method: request.method, url: withoutQuery(request.url), remoteAddress: request.ip };
    const responseTime = reply.elapsedTime;
    // Errors keep the request's own logger: an error object may carry anything, and redaction must see it.
    if (error) reply.log.error({ req, res: { statusCode }, responseTime, err: error }, 'request errored');
    else this.#log.info({ requestId: request.id, req, res: { statusCode }, responseTime }, 'request completed');
  }
}

/**
 * The path, with any query string replaced: queries carry one-time secrets (an OIDC callback's `code`, a
 * device `user_code`) that must not reach the logs.
 */
function withoutQuery(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : `${url.slice(0, query)}?…`;
}
