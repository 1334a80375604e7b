/**
 * Upstream failures, for every executor that calls a model server, search backend or media engine: a
 * typed error with the code the envelope gets, and the classification of undici's connection errors and
 * of non-2xx answers. The pipeline refunds a turn that failed this way before any output.
 *
 * How an upstream's HTTP status reaches the client (CONFORMANCE "Upstream errors, as clients read them"):
 * a 4xx that is the request's fault (400, 404, 413, 422) comes back as the same status with the upstream's
 * own reason (`upstream_rejected`, no retry); 401/403 mean svc's upstream credentials are wrong — the
 * operator's problem, answered 502 without the upstream's text; 429 keeps the upstream's `Retry-After`;
 * 5xx, timeouts and connection failures are "the model server failed" (502/503/504, retryable).
 */
import type { ErrorCode } from '../errors/codes.ts';

export interface UpstreamFailureDetails {
  /** What the client is told instead of the code's default text. */
  clientMessage?: string;
  /** The status to answer with, where the code's status varies (`upstream_rejected`). */
  status?: number;
  /** Headers passed on to the client (`retry-after`). */
  headers?: Record<string, string>;
}

export class UpstreamFailure extends Error {
  readonly code: ErrorCode;
  readonly upstreamStatus: number | null;
  readonly details: UpstreamFailureDetails;
  constructor(code: ErrorCode, message: string, upstreamStatus: number | null, cause?: unknown, details: UpstreamFailureDetails = {}) {
    super(message, { cause });
    this.code = code;
    this.upstreamStatus = upstreamStatus;
    this.details = details;
  }
}

/** The upstream refused the request itself: another deployment of the same model would refuse it too. */
export function isRequestRejection(status: number): boolean {
  return status === 400 || status === 413 || status === 422;
}

/** The failure for a non-2xx answer: `body` is what the upstream sent (its reason), `retryAfter` its header. */
export function upstreamHttpFailure(status: number, body: string, retryAfter: string | string[] | undefined, what = 'The model server'): UpstreamFailure {
  const message = `${what} answered ${status}.`;
  if (isRequestRejection(status) || status === 404) {
    const reason = upstreamReason(body);
    return new UpstreamFailure('upstream_rejected', message, status, body, {
      status,
      clientMessage: `${what} rejected the request (HTTP ${status}): ${reason ?? 'it gave no reason'}${reason?.endsWith('.') ? '' : '.'} Nothing was billed.`,
    });
  }
  if (status === 401 || status === 403) {
    // Our credentials at the upstream are wrong: nothing the client can fix, and its text is not theirs to see.
    return new UpstreamFailure('upstream_error', message, status, body, {
      clientMessage: `${what} refused svc's own credentials (HTTP ${status}): the operator must fix this upstream's API key or permissions. Nothing was billed.`,
    });
  }
  if (status === 429) {
    const seconds = retryAfterSeconds(retryAfter) ?? 1;
    return new UpstreamFailure('upstream_rate_limited', message, status, body, {
      clientMessage: `${what} is busy (HTTP 429, too many requests); nothing was billed. Retry in ${seconds} s or switch models.`,
      headers: { 'retry-after': String(seconds) },
    });
  }
  if (status === 408 || status === 504) return new UpstreamFailure('upstream_timeout', message, status, body);
  if (status === 503) {
    const seconds = retryAfterSeconds(retryAfter);
    return new UpstreamFailure('upstream_unavailable', message, status, body, seconds === null ? {} : { headers: { 'retry-after': String(seconds) } });
  }
  return new UpstreamFailure('upstream_error', message, status, body);
}

/**
 * The reason in an error body, as OpenAI (`{error:{message}}`), vLLM and SGLang (`{message}`), FastAPI
 * (`{detail}`) and llama.cpp write it; plain text when short. Control characters are dropped, length capped.
 */
export function upstreamReason(body: string): string | null {
  let reason: unknown = null;
  const text = body.trim();
  if (text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      const error = parsed.error;
      reason =
        (typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : error) ??
        parsed.message ??
        (Array.isArray(parsed.detail) ? (parsed.detail as { msg?: unknown }[]).map((d) => d?.msg).filter((m) => typeof m === 'string').join('; ') : parsed.detail);
    } catch {
      reason = null;
    }
  } else if (text.length > 0 && !text.startsWith('<')) {
    reason = text;
  }
  if (typeof reason !== 'string' || reason.trim().length === 0) return null;
  // eslint-disable-next-line no-control-regex
  const clean = reason.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return clean.length > 500 ? `${clean.slice(0, 497)}…` : clean;
}

/** `Retry-After` in whole seconds (1–3600): delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(header: string | string[] | undefined): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  const seconds = /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : (Date.parse(value) - Date.now()) / 1000;
  if (!Number.isFinite(seconds)) return null;
  return Math.min(3600, Math.max(1, Math.ceil(seconds)));
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
