import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { serviceName } from '../log.ts';

/**
 * One log line per request, written when it completes (method, URL, status, time and the request id),
 * instead of Fastify's two. The line is pino's JSON shape (`level`, `time`, `service`, …, `msg`) built from
 * named fields only — no headers, no body — and written straight to the logger's destination
 * (`infoLineWriter`): on the chat hot path pino's redaction, serialisers and formatting cost as much CPU as
 * the admission. Errors still go through the request's own logger, with redaction.
 */
export class OneLinePerRequest extends LogController {
  readonly #write: ((line: string) => void) | null;

  /** `write` is null when `info` lines are off. */
  constructor(write: ((line: string) => void) | null) {
    super({ requestIdLogLabel: 'requestId' });
    this.#write = write;
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const statusCode = reply.statusCode;
    const responseTime = reply.elapsedTime;
    if (error) {
      // An error object may carry anything: redaction must see it.
      const req = { method: request.method, url: withoutQuery(request.url), remoteAddress: request.ip };
      reply.log.error({ req, res: { statusCode }, responseTime, err: error }, 'request errored');
      return;
    }
    this.#write?.(requestLine(request.id, request.method, request.url, request.ip, statusCode, responseTime));
  }
}

/**
 * The "request completed" line (`responseTime` in milliseconds). The request id is svc's own format
 * (`request-id.ts`) and the method a token Node's parser checked: only the URL and the address are escaped.
 */
export function requestLine(requestId: string, method: string, url: string, ip: string, statusCode: number, responseTime: number): string {
  return (
    `{"level":30,"time":${Date.now()},"service":"${serviceName}","requestId":"${requestId}","req":{"method":"${method}","url":${JSON.stringify(withoutQuery(url))},` +
    `"remoteAddress":${JSON.stringify(ip)}},"res":{"statusCode":${statusCode}},"responseTime":${responseTime},"msg":"request completed"}\n`
  );
}

/**
 * The path, with any query string replaced: queries carry one-time secrets (an OIDC callback's `code`, a
 * device `user_code`) that must not reach the logs.
 */
function withoutQuery(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : `${url.slice(0, query)}?…`;
}
