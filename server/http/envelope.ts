/**
 * The REST error mapper: the only place that turns an error into the spec's envelope (spec §7,
 * DESIGN §5). Route handlers throw; Fastify's error and not-found handlers end up here. The Anthropic
 * Messages API (`/v1/messages`, and `/v1/models` asked with `anthropic-version`) gets the same error in
 * Anthropic's shape (`anthropic-error.ts`), chosen by route: same code, headers and refund, another body.
 */
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, bilingual } from '../errors/app-error.ts';
import { errorCodes, type ErrorCode } from '../errors/codes.ts';
import { anthropicErrorBody, anthropicStatus } from './anthropic-error.ts';

/** Which API's error body a request gets: svc's envelope, or Anthropic's `{type:"error", error}`. */
export type ErrorShape = 'svc' | 'anthropic';

/** The error shape for a request, by its path (and, where both APIs share a path, the `anthropic-version` header). */
export function errorShapeOf(url: string, headers: Record<string, unknown>): ErrorShape {
  if (!url.startsWith('/v1/')) return 'svc';
  if (url.startsWith('/v1/messages') && (url.length === 12 || url[12] === '/' || url[12] === '?')) return 'anthropic';
  return url.startsWith('/v1/models') && typeof headers['anthropic-version'] === 'string' ? 'anthropic' : 'svc';
}

export interface ErrorEnvelope {
  ok: false;
  requestId: string;
  error: { message: string; type: string; code: ErrorCode; param: string | null };
  message: string;
  messageZh: string;
  code: ErrorCode;
  stage: string;
  actions: string[];
  debug: {
    productModel: string | null;
    upstreamStatus: number | null;
    upstreamHost: string | null;
    quotaRefunded: boolean;
    latencyMs: number;
  };
  [detail: string]: unknown;
}

/** Builds the envelope for an `AppError`. `latencyMs` is the time since the request arrived. */
export function envelopeFor(error: AppError, requestId: string, latencyMs: number): ErrorEnvelope {
  const info = errorCodes[error.code];
  const { param, stage, debug, details } = error.options;
  return {
    ...details,
    ok: false,
    requestId,
    error: { message: error.message, type: info.type, code: error.code, param: param ?? null },
    message: error.message,
    messageZh: error.messageZh,
    code: error.code,
    stage: stage ?? info.stage,
    actions: [...info.actions],
    debug: {
      productModel: debug?.productModel ?? null,
      upstreamStatus: debug?.upstreamStatus ?? null,
      upstreamHost: debug?.upstreamHost ?? null,
      quotaRefunded: debug?.quotaRefunded ?? false,
      latencyMs: Math.round(latencyMs),
    },
  };
}

/** Maps anything thrown (ours, Fastify's, or a bug) to an `AppError`. Unknown errors become `internal_error`. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as Partial<FastifyError> | undefined;
  switch (fastifyError?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_json', bilingual('The request body is not valid JSON: {reason}', '请求体不是有效的 JSON：{reason}', { reason: fastifyError.message ?? '' }));
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', bilingual('The Content-Length header does not match the body.', 'Content-Length 请求头与请求体长度不符。'));
    // Router errors (Fastify `frameworkErrors`), raised before any route runs.
    case 'FST_ERR_BAD_URL':
      return new AppError('invalid_request', bilingual('The URL is malformed (bad percent-encoding).', 'URL 格式有误（百分号编码无效）。'));
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('invalid_request', bilingual('A path parameter is too long (at most {max} characters).', '路径参数过长（最多 {max} 个字符）。', { max: 100 }));
  }
  if (error instanceof SyntaxError && fastifyError?.statusCode === 400) {
    return new AppError('invalid_json', bilingual('The request body is not valid JSON: {reason}', '请求体不是有效的 JSON：{reason}', { reason: error.message }));
  }
  if (fastifyError?.validation) {
    const first = fastifyError.validation[0];
    const param = first?.instancePath ? first.instancePath.replace(/^\//, '').replaceAll('/', '.') : undefined;
    return new AppError('invalid_request', fastifyError.message ?? 'The request is invalid.', param ? { param } : {});
  }
  return new AppError('internal_error', undefined, { cause: error });
}

/** The envelope's status, headers (the spec's, retry advice, the error's own) and JSON body, in the API's shape. */
export function errorResponse(error: AppError, requestId: string, latencyMs: number, shape: ErrorShape = 'svc'): { status: number; headers: Record<string, string>; body: string } {
  const envelope = envelopeFor(error, requestId, latencyMs);
  const headers: Record<string, string> = {
    'x-svc-error-code': envelope.code,
    'x-svc-error-stage': envelope.stage,
    'cache-control': 'no-store',
    ...retryAdvice(error),
    ...error.options.headers,
    'content-type': 'application/json; charset=utf-8',
  };
  if (shape === 'anthropic') {
    headers['request-id'] = requestId;
    return { status: anthropicStatus(error.status), headers, body: JSON.stringify(anthropicErrorBody(envelope, error.status)) };
  }
  return { status: error.status, headers, body: JSON.stringify(envelope) };
}

/** Sends the envelope with the spec's headers, in the shape of the API the request belongs to. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  const { status, headers, body } = errorResponse(error, request.id, reply.elapsedTime, errorShapeOf(request.url, request.headers));
  return reply.code(status).headers(headers).send(body);
}

/** Logs what a failed request needs an operator to see: a bug in full, a 5xx (upstream, unavailable) briefly. */
export function logFailure(log: FastifyBaseLogger, error: unknown, appError: AppError): void {
  if (appError.code === 'internal_error') log.error({ err: error }, 'unexpected error');
  else if (appError.status >= 500) log.warn({ code: appError.code, err: appError.options.cause }, appError.message);
}

/** Paths of the machine-facing surfaces: an unknown one gets the envelope even when a browser asks for HTML. */
const API_PREFIXES = ['/v1', '/api/', '/graphql', '/oauth/', '/.well-known/', '/healthz', '/readyz', '/metrics'];

/**
 * Installs the error handler and the 404/405 handler on the root instance. `notFoundPage` is the web
 * app's page (its router shows "not found"), sent with 404 to a browser that opens an unknown page.
 */
export function installErrorHandling(app: FastifyInstance, allowedMethods: (method: string, path: string) => string[], notFoundPage: () => string | null = () => null): void {
  app.setErrorHandler((error, request, reply) => {
    // A client that went away mid-body (or mid-request) is nobody to answer, and no fault of ours.
    if (request.raw.aborted || reply.raw.destroyed) {
      request.log.debug({ err: (error as Error).message }, 'client went away before the request was read');
      return reply.hijack();
    }
    const appError = toAppError(error);
    logFailure(request.log, error, appError);
    return sendError(request, reply, appError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = allowedMethods(request.method, path);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(
        request,
        reply,
        new AppError(
          'method_not_allowed',
          bilingual('Method {method} is not allowed on {path}; use {allowed}.', '{path} 不支持 {method} 方法，请使用 {allowed}。', {
            method: request.method,
            path,
            allowed: { en: allowed.join(' or '), zh: allowed.join(' 或 ') },
          }),
        ),
      );
    }
    const page = opensPage(request, path) ? notFoundPage() : null;
    if (page !== null) return reply.code(404).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
    return sendError(request, reply, new AppError('not_found', bilingual('No route for {method} {path}.', '没有 {method} {path} 这个路由。', { method: request.method, path })));
  });
}

/** A browser navigating to a page: GET (or HEAD) asking for HTML, outside the API paths. */
function opensPage(request: FastifyRequest, path: string): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.includes('text/html') && !API_PREFIXES.some((prefix) => path.startsWith(prefix));
}

/** 503s that last until the operator changes the configuration: a retry (or a `Retry-After`) would only mislead. */
const needsOperator: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['upstream_not_configured', 'mail_not_configured']);

/**
 * The SDKs retry 408, 409, 429 and 5xx by default (CONFORMANCE "Errors and retries"): say
 * `x-should-retry: false` where the same request cannot succeed — a client error, an exhausted pool, or
 * an upstream that refused the request itself (its 4xx, surfaced as 502) — and when to come back on 503.
 */
export function retryAdvice(error: AppError): Record<string, string> {
  const { status } = error;
  const upstreamStatus = error.options.debug?.upstreamStatus ?? 0;
  const transient = (code: number) => code === 408 || code === 409 || code === 429 || code >= 500;
  const upstreamRefused = upstreamStatus >= 400 && !transient(upstreamStatus);
  if (!transient(status) || upstreamRefused || needsOperator.has(error.code)) return { 'x-should-retry': 'false' };
  if (status === 503) return { 'retry-after': '1' };
  return {};
}
