/**
 * svc's errors as the Anthropic Messages API writes them, for its clients (the Anthropic SDKs, Claude
 * Code): `{"type":"error","error":{"type","message"},"request_id"}`, the type named by the status, and
 * Anthropic's 529 for "overloaded" where svc says 503 (the model server or svc itself is unavailable:
 * Claude Code retries it and tells the user so). The code, stage and refund stay in svc's headers.
 */

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

/** The status an Anthropic client is answered with for svc's `status`. */
export function anthropicStatus(status: number): number {
  return status === 503 ? 529 : status;
}

/** Anthropic's error type for an HTTP status (svc's or Anthropic's). */
export function anthropicErrorType(status: number): AnthropicErrorType {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * The error body for svc's envelope, which it is made from (one mapper: `envelope.ts`). Anthropic's body has
 * no `param`: the field at fault leads the message, as Anthropic's own validation messages have it.
 */
export function anthropicErrorBody(envelope: { requestId: string; error: { message: string; param: string | null } }, status: number): { type: 'error'; error: { type: AnthropicErrorType; message: string }; request_id: string } {
  return { type: 'error', error: { type: anthropicErrorType(status), message: withParam(envelope.error) }, request_id: envelope.requestId };
}

/** `message`, led by `param` when it names a field the message does not. */
export function withParam(error: { message: string; param: string | null }): string {
  const { message, param } = error;
  return param && !message.includes(param) ? `${param}: ${message}` : message;
}
