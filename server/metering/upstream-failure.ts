/**
 * Upstream failures, for every executor that calls a model server, search backend or media engine: a
 * typed error with the code the envelope gets, and the classification of undici's connection errors.
 * The pipeline refunds a turn that failed this way before any output.
 */
import type { ErrorCode } from '../errors/codes.ts';

export class UpstreamFailure extends Error {
  readonly code: ErrorCode;
  readonly upstreamStatus: number | null;
  constructor(code: ErrorCode, message: string, upstreamStatus: number | null, cause?: unknown) {
    super(message, { cause });
    this.code = code;
    this.upstreamStatus = upstreamStatus;
  }
}

/** The code for a non-2xx upstream status. */
export function upstreamStatusCode(status: number): ErrorCode {
  if (status === 408 || status === 504) return 'upstream_timeout';
  if (status === 429 || status === 503) return 'upstream_unavailable';
  return 'upstream_error';
}

/** A connection that died before answering (a stale keep-alive socket): worth one retry. */
export function isReset(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
}

export function classifyUpstreamError(error: unknown, what = 'The model server'): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  const code = (error as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT' || (error as Error)?.name === 'TimeoutError') {
    return new UpstreamFailure('upstream_timeout', `${what} did not answer in time.`, null, error);
  }
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || isReset(error) || code === 'UND_ERR_CLOSED') {
    return new UpstreamFailure('upstream_unavailable', `${what} is unreachable.`, null, error);
  }
  return new UpstreamFailure('upstream_error', `${what} failed.`, null, error);
}
