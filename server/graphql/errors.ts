/**
 * The GraphQL error mapper: every error a client sees carries what the REST envelope would tell it, in
 * `extensions`: `code`, `stage`, `status`, `param`, `messageZh`, `actions`, the request id (`requestId`,
 * the same `mbr_…` as the `x-svc-request-id` header and the log line; over graphql-ws the operation's own),
 * and, where REST sends headers, `retryAfter` (seconds) and `rateLimit`, plus the error's details (a
 * quota's window and reset time). Anything unexpected is masked as `internal_error`.
 */
import { createRequire } from 'node:module';
import type { ExecutionResult, GraphQLError as GraphQLErrorType } from 'graphql';
import { AppError } from '../errors/app-error.ts';
import { errorCodes } from '../errors/codes.ts';
import { isAsyncIterable, mapIterator } from './async-iterators.ts';

type GraphQLError = GraphQLErrorType;

/**
 * graphql ships CommonJS and ESM builds (the dual-package hazard). Node loads the CommonJS one for every
 * `import 'graphql'` (the package has no `exports`), and so do yoga and graphql-ws; a bundler such as vitest's
 * may hand our own modules the ESM one. graphql-ws tells errors by `instanceof`, so the errors built here
 * use the class Node loads, and errors coming in are recognised by their tag, which both builds share.
 */
const GraphQLError = createRequire(import.meta.url)('graphql').GraphQLError as typeof GraphQLErrorType;

export function isGraphQLError(error: unknown): error is GraphQLError {
  return error instanceof GraphQLError || Object.prototype.toString.call(error) === '[object GraphQLError]';
}

export function maskError(error: unknown): GraphQLError {
  const original = isGraphQLError(error) && error.originalError ? error.originalError : error;
  const path = isGraphQLError(error) ? error.path : undefined;
  if (original instanceof AppError) return fromAppError(original, path);
  // Errors graphql-js raises itself before any resolver runs (syntax, validation, and variables of the
  // wrong type, whose coercion error wraps the scalar's own) are the client's fault and safe to show. With a
  // path, a graphql-js error is a resolver returning the wrong shape: ours, so it stays masked.
  if (isGraphQLError(error) && !error.path && (!error.originalError || isGraphQLError(error.originalError))) return asInvalidRequest(error);
  return new GraphQLError(errorCodes.internal_error.message, {
    path,
    extensions: { code: 'internal_error', stage: 'internal', status: 500, messageZh: errorCodes.internal_error.messageZh, actions: [...errorCodes.internal_error.actions] },
  });
}

function fromAppError(error: AppError, path: readonly (string | number)[] | undefined): GraphQLError {
  const info = errorCodes[error.code];
  const { headers = {}, details = {}, param, stage } = error.options;
  const retryAfter = headers['retry-after'] === undefined ? undefined : Number(headers['retry-after']);
  const limit = headers['x-ratelimit-limit'];
  return new GraphQLError(error.message, {
    path,
    extensions: {
      // Details first, so they never shadow the fields every error has.
      ...details,
      code: error.code,
      stage: stage ?? info.stage,
      status: error.status,
      param: param ?? null,
      // The web app shows this to members reading Chinese, as REST clients read the envelope's `messageZh`.
      messageZh: error.messageZh,
      actions: [...info.actions],
      ...(retryAfter !== undefined && Number.isFinite(retryAfter) ? { retryAfter } : {}),
      ...(limit !== undefined
        ? { rateLimit: { limit: Number(limit), remaining: Number(headers['x-ratelimit-remaining'] ?? 0), reset: Number(headers['x-ratelimit-reset'] ?? 0) } }
        : {}),
    },
  });
}

/**
 * A parse, validation or variable error as our table names it: `invalid_request`, stage `validation`, in
 * place of yoga's own codes. The message and locations stay.
 */
export function asInvalidRequest(error: GraphQLError): GraphQLError {
  const info = errorCodes.invalid_request;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    // `http.status` is yoga's own marker for a 400; set here because yoga's `instanceof` check can miss
    // errors built by the other graphql build.
    extensions: {
      ...error.extensions,
      code: 'invalid_request',
      stage: 'validation',
      status: info.status,
      param: null,
      messageZh: info.messageZh,
      actions: [...info.actions],
      http: { status: 400, spec: true },
    },
  });
}

/** An envelop plugin that gives parse and validation errors our code (they never reach `maskError`). */
export const useErrorCodes = {
  onParse: () => ({ result, replaceParseResult }: { result: unknown; replaceParseResult: (result: unknown) => void }) => {
    if (isGraphQLError(result)) replaceParseResult(asInvalidRequest(result));
  },
  onValidate: () => ({ result, setResult }: { result: readonly GraphQLError[]; setResult: (errors: GraphQLError[]) => void }) => {
    if (result.length > 0) setResult(result.map(asInvalidRequest));
  },
};

/** The same errors with the request id in their extensions. */
export function errorsWithRequestId(errors: readonly GraphQLError[], requestId: string): GraphQLError[] {
  return errors.map(
    (error) =>
      new GraphQLError(error.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        originalError: error.originalError,
        extensions: { ...error.extensions, requestId },
      }),
  );
}

/** A result (or each result of a stream) with the request id on its errors. */
export function resultWithRequestId<T extends ExecutionResult | ExecutionResult[] | AsyncIterable<ExecutionResult>>(result: T, requestId: string): T {
  const one = (single: ExecutionResult): ExecutionResult => (single.errors?.length ? { ...single, errors: errorsWithRequestId(single.errors, requestId) } : single);
  if (Array.isArray(result)) return result.map(one) as T;
  if (isAsyncIterable(result)) return mapIterator(result, one) as unknown as T;
  return one(result as ExecutionResult) as T;
}
