/**
 * Sending a turn's request upstream: to the model's deployments in order until one answers 200 (fallback),
 * with one retry on the same deployment for a connection that died before answering (a stale keep-alive
 * socket). A deployment that rejects the request itself (400, 413, 422: context too long, a bad parameter)
 * ends the search — the next one would reject it too; 404, 401/403, 429 and 5xx try the next. The last
 * failure is what the client sees (`upstreamHttpFailure`). Only ever called before the first byte reaches
 * the client. Every executor that calls an OpenAI-compatible server (chat, images, speech) goes through here.
 */
import type { Dispatcher } from 'undici';
import type { ClientSignal } from '../../metering/executor.ts';
import type { Turn } from '../../metering/turn.ts';
import { classifyUpstreamError, isRequestRejection, isReset, UpstreamFailure, upstreamHttpFailure } from '../../metering/upstream-failure.ts';
import type { Deployment } from './model.registry.ts';

export interface UpstreamRequest {
  /** Path below the deployment's base path, e.g. `/chat/completions`. */
  endpoint: string;
  /** The JSON body for this deployment (its upstream model name differs per deployment). */
  body(deployment: Deployment): string;
  /** The `accept` header; default JSON or SSE (chat). Speech asks for audio. */
  accept?: string;
}

export async function dispatch(turn: Turn, deployments: readonly Deployment[], signal: ClientSignal, request: UpstreamRequest): Promise<Dispatcher.ResponseData> {
  let failure: UpstreamFailure | null = null;
  for (const deployment of deployments) {
    // A client that left before the first dispatch costs nothing (`turn.deployment` stays null).
    if (signal.aborted && turn.deployment === null) throw new Error('the client went away before dispatch');
    turn.deployment = deployment.label;
    const payload = request.body(deployment);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const response = await deployment.pool.request({
          path: `${deployment.basePath}${request.endpoint}`,
          method: 'POST',
          headers: upstreamHeaders(deployment, turn.id, request.accept),
          body: payload,
          signal: signal as unknown as AbortSignal,
        });
        turn.upstreamStatus = response.statusCode;
        if (response.statusCode === 200) return response;
        const detail = await response.body.text().catch(() => '');
        failure = upstreamHttpFailure(response.statusCode, detail.slice(0, 4096), response.headers['retry-after']);
        break;
      } catch (error) {
        if (signal.aborted) throw error;
        failure = classifyUpstreamError(error);
        if (!(failure.code === 'upstream_unavailable' && isReset(error) && attempt === 0)) break;
      }
    }
    if (failure && failure.upstreamStatus !== null && isRequestRejection(failure.upstreamStatus)) throw failure;
  }
  throw failure ?? new UpstreamFailure('upstream_unavailable', 'No upstream is configured for this model.', null);
}

/** The turn's id goes along as `x-request-id`, so a model server's logs and svc's ledger name a request alike. */
function upstreamHeaders(deployment: Deployment, requestId: string, accept = 'application/json, text/event-stream'): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept, 'x-request-id': requestId };
  if (deployment.authorization) headers.authorization = deployment.authorization;
  return headers;
}
