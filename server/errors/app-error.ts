import { errorCodes, type ErrorCode, type ErrorStage } from './codes.ts';

/** What the envelope's `debug` object may carry. Never secrets or internal URLs (DESIGN §5). */
export interface ErrorDebug {
  productModel?: string | null;
  upstreamStatus?: number | null;
  upstreamHost?: string | null;
  quotaRefunded?: boolean;
}

export interface AppErrorOptions {
  /** The request field at fault, reported as `error.param`. */
  param?: string;
  stage?: ErrorStage;
  messageZh?: string;
  debug?: ErrorDebug;
  /** The HTTP status, where a code's status varies (`upstream_rejected` answers with the upstream's own 4xx). */
  status?: number;
  /** Extra response headers, such as `Retry-After`. */
  headers?: Record<string, string>;
  /** Extra top-level envelope fields (e.g. the quota window and its reset time). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * The error every domain throws for an expected failure. Transports map it in exactly one place each
 * (REST: `http/envelope.ts`; GraphQL: `graphql/builder.ts`).
 */
export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly options: AppErrorOptions;

  constructor(code: ErrorCode, message?: string, options: AppErrorOptions = {}) {
    super(message ?? errorCodes[code].message, { cause: options.cause });
    this.code = code;
    this.options = options;
  }

  get status(): number {
    return this.options.status ?? errorCodes[this.code].status;
  }
}
