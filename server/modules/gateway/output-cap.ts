/**
 * One rule for an output cap above the model's `maxOutputTokens`, on every text API: chat completions'
 * `max_tokens` (or `max_completion_tokens`), the Responses API's `max_output_tokens`, legacy completions'
 * `max_tokens` and the Messages API's `max_tokens` all reach it through chat validation. Coding agents ask
 * for what their own vendors' models can write whatever model they talk to (opencode 32,000, Claude Code
 * 32k–128k), so by default (`gateway.maxTokens: clamp`) such a request is served with the model's cap — the
 * upstream is asked for it, and the reservation covers it — and the reply says so: `x-svc-max-tokens: <cap>`.
 * With `reject` it is a 400 naming the cap.
 */
import type { ServerResponse } from 'node:http';
import { AppError } from '../../errors/app-error.ts';

export type MaxTokensPolicy = 'clamp' | 'reject';

/** Marks a body whose output cap was lowered: the value asked for (a symbol: never serialized upstream). */
export const loweredFrom = Symbol('loweredFrom');

/** The header that tells the client its output cap was lowered, and to what. */
export const maxTokensHeader = 'x-svc-max-tokens';

export interface CappedBody {
  max_tokens: number;
  [loweredFrom]?: number;
}

/** The output cap a request is served with: `asked`, or the model's `cap` when it asked for more; under `reject`, a 400 for `param`. */
export function outputCap(asked: number, cap: number | undefined, policy: MaxTokensPolicy, param: string, model: string): number {
  if (cap === undefined || asked <= cap) return asked;
  if (policy === 'reject') throw new AppError('invalid_request', `${param} must be at most ${cap} for model ${model}.`, { param });
  return cap;
}

/** Says on `response` that the body's output cap was lowered (before anything is written, errors included). */
export function announceCap(body: CappedBody, response: ServerResponse | undefined): void {
  if (response !== undefined && body[loweredFrom] !== undefined && !response.headersSent) response.setHeader(maxTokensHeader, String(body.max_tokens));
}
