/**
 * The GraphQL error mapper: an `AppError` becomes a GraphQL error whose `extensions` carry the same
 * `code` and `stage` the REST envelope would; anything else is masked as `internal_error`. The request id
 * travels in the `x-svc-request-id` response header, as on every route.
 */
import { GraphQLError } from 'graphql';
import { AppError } from '../errors/app-error.ts';
import { errorCodes } from '../errors/codes.ts';

/**
 * `instanceof GraphQLError` is not enough: graphql ships CommonJS and ESM builds, and yoga may load the other
 * one (the dual-package hazard), so errors it wraps fail the check. The tag is the same in both.
 */
function isGraphQLError(error: unknown): error is GraphQLError {
  return error instanceof GraphQLError || Object.prototype.toString.call(error) === '[object GraphQLError]';
}

export function maskError(error: unknown): GraphQLError {
  const original = isGraphQLError(error) && error.originalError ? error.originalError : error;
  const path = isGraphQLError(error) ? error.path : undefined;
  if (original instanceof AppError) {
    const info = errorCodes[original.code];
    return new GraphQLError(original.message, {
      path,
      extensions: {
        code: original.code,
        stage: original.options.stage ?? info.stage,
        status: original.status,
        param: original.options.param ?? null,
      },
    });
  }
  // Errors graphql-js produces itself (syntax, validation, variables) are the client's fault and safe to show.
  if (isGraphQLError(error) && !error.originalError) return asInvalidRequest(error);
  return new GraphQLError(errorCodes.internal_error.message, { path, extensions: { code: 'internal_error', stage: 'internal' } });
}

/**
 * A parse or validation error as our table names it: `invalid_request`, stage `validation`, in place of
 * yoga's own codes. The message and locations stay.
 */
export function asInvalidRequest(error: GraphQLError): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    // `http.status` is yoga's own marker for a 400; set here because yoga's `instanceof` check can miss
    // errors built by the other graphql build.
    extensions: { ...error.extensions, code: 'invalid_request', stage: 'validation', http: { status: 400, spec: true } },
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
