/**
 * Sending a turn's request upstream: to the model's deployments in order until one answers 200 (fallback),
 * with one retry on the same deployment for a connection that died before answering (a stale keep-alive
 * socket). A deployment that rejects the request itself (400, 413, 422: context too long, a bad parameter)
 * ends the search — the next one would reject it too; 404, 401/403, 429 and 5xx try the next. The last
 * failure is what the client sees (`upstreamHttpFailure`). Only ever called before the first byte reaches
 * the client. Every executor that calls an OpenAI-compatible server (chat, images, speech) goes through here.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { errors, type Dispatcher } from 'undici';
import { RequestNotSentError } from './http1-pool.ts';
import { UpstreamStream } from './upstream-stream.ts';
import type { ClientSignal } from '../../metering/executor.ts';
import type { Turn } from '../../metering/turn.ts';
import { classifyUpstreamError, isRequestRejection, isReset, UpstreamFailure, upstreamHttpFailure } from '../../metering/upstream-failure.ts';
import type { Deployment } from './model.registry.ts';

export interface UpstreamRequest {
  /** Path below the deployment's base path, e.g. `/chat/completions`. */
  endpoint: string;
  /** The JSON body for this deployment (its upstream model name differs per deployment). */
  body(deployment: Deployment): string | Buffer;
  /** The `accept` header; default JSON or SSE (chat). Speech asks for audio. */
  accept?: string;
}

export function dispatch(turn: Turn, deployments: readonly Deployment[], signal: ClientSignal, request: UpstreamRequest): Promise<Dispatcher.ResponseData> {
  return tryDeployments(turn, deployments, signal, request, (deployment, options) => deployment.pool.request(options), (response) => response.body.text());
}

/** A reply read whole, as text; `bodyError` when its body failed after the status line (what arrived is in `text`). */
export interface TextResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  text: string;
  bodyError: Error | null;
}

/**
 * `dispatch` for a reply that is read whole (a non-streaming chat completion): its body gathered as text by
 * a dispatch handler of our own instead of undici's body stream (`request` builds a Readable, a promise and
 * their listeners per call, which was ~13 % of svc's CPU per non-streaming request).
 */
export function dispatchText(turn: Turn, deployments: readonly Deployment[], signal: ClientSignal, request: UpstreamRequest): Promise<TextResponse> {
  return tryDeployments(turn, deployments, signal, request, requestText, async (response) => response.text);
}

/** `dispatch` for a streamed reply: its body taken chunk by chunk (`UpstreamStream.relay`), not through a Readable. */
export function dispatchStream(turn: Turn, deployments: readonly Deployment[], signal: ClientSignal, request: UpstreamRequest): Promise<UpstreamStream> {
  return tryDeployments(turn, deployments, signal, request, requestStream, (response) => response.text());
}

async function tryDeployments<R extends { statusCode: number; headers: IncomingHttpHeaders }>(
  turn: Turn,
  deployments: readonly Deployment[],
  signal: ClientSignal,
  request: UpstreamRequest,
  send: (deployment: Deployment, options: Dispatcher.RequestOptions) => Promise<R>,
  errorText: (response: R) => Promise<string>,
): Promise<R> {
  let failure: UpstreamFailure | null = null;
  for (const deployment of deployments) {
    // A client that left before the first dispatch costs nothing (`turn.deployment` stays null).
    if (signal.aborted && turn.deployment === null) throw new Error('the client went away before dispatch');
    turn.deployment = deployment.label;
    const payload = request.body(deployment);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const response = await send(deployment, {
          path: `${deployment.basePath}${request.endpoint}`,
          method: 'POST',
          headers: upstreamHeaders(deployment, turn.id, request.accept),
          body: payload,
          signal: signal as unknown as AbortSignal,
        });
        turn.upstreamStatus = response.statusCode;
        if (response.statusCode === 200) return response;
        const detail = await errorText(response).catch(() => '');
        failure = upstreamHttpFailure(response.statusCode, detail.slice(0, 4096), response.headers['retry-after']);
        break;
      } catch (error) {
        if (signal.aborted) {
          // The client left before the request reached the upstream: it cost nothing (refunded, not billed).
          if (error instanceof RequestNotSentError) turn.deployment = null;
          throw error;
        }
        failure = classifyUpstreamError(error);
        if (!(failure.code === 'upstream_unavailable' && isReset(error) && attempt === 0)) break;
      }
    }
    if (failure && failure.upstreamStatus !== null && isRequestRejection(failure.upstreamStatus)) throw failure;
  }
  throw failure ?? new UpstreamFailure('upstream_unavailable', 'No upstream is configured for this model.', null);
}

/**
 * One call through undici's dispatch API, without a body stream around the reply; the client's going away
 * aborts it. A subclass reads the reply and settles the call's promise (`resolve`, `reject`).
 *
 * Classes rather than object literals closing over the request: once a literal's objects have outlived a
 * few scavenges (as every call does while its upstream takes its time), V8 may allocate that literal's
 * objects straight in the old generation, and a dead old object keeps what it points to alive until the next
 * full collection. With classes, S3 run right after S2's 200 ms requests was ~8 % faster.
 */
abstract class UpstreamCall<T> implements Dispatcher.DispatchHandler {
  protected readonly resolve: (value: T) => void;
  protected readonly reject: (error: Error) => void;
  readonly #signal: ClientSignal;
  #controller: Dispatcher.DispatchController | null = null;
  readonly #abort = () => this.#controller?.abort(new errors.RequestAbortedError());

  constructor(signal: ClientSignal, resolve: (value: T) => void, reject: (error: Error) => void) {
    this.resolve = resolve;
    this.reject = reject;
    this.#signal = signal;
    signal.once('abort', this.#abort);
  }

  /** The status line and headers (informational 1xx answers are not passed on). */
  protected abstract start(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void;
  protected abstract data(chunk: Buffer): void;
  protected abstract end(): void;
  protected abstract fail(error: Error): void;

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#signal.aborted) controller.abort(new errors.RequestAbortedError());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode >= 200) this.start(controller, statusCode, headers);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.data(chunk);
  }

  onResponseEnd(): void {
    this.#signal.off('abort', this.#abort);
    this.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#signal.off('abort', this.#abort);
    this.fail(error);
  }
}

/** Sends the call's request through the origin's chat client (svc's own, or undici's: `gateway.upstreamClient`); `call` reads the reply. */
function callUpstream<T>(deployment: Deployment, options: Dispatcher.RequestOptions, call: UpstreamCall<T>): void {
  const request = { path: options.path, method: options.method, headers: options.headers as Record<string, string>, body: options.body as string | Buffer };
  deployment.chat.dispatch(request, call);
}

/** A call answered at its status line, with its body to be relayed. */
function requestStream(deployment: Deployment, options: Dispatcher.RequestOptions): Promise<UpstreamStream> {
  return new Promise((resolve, reject) => callUpstream(deployment, options, new StreamCall(options.signal as unknown as ClientSignal, resolve, reject)));
}

class StreamCall extends UpstreamCall<UpstreamStream> {
  #stream: UpstreamStream | null = null;

  protected start(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#stream = new UpstreamStream(controller, statusCode, headers);
    this.resolve(this.#stream);
  }

  protected data(chunk: Buffer): void {
    this.#stream!.data(chunk);
  }

  protected end(): void {
    this.#stream!.end();
  }

  protected fail(error: Error): void {
    if (this.#stream) this.#stream.fail(error);
    else this.reject(error);
  }
}

/**
 * A call with its body gathered whole. A failure before the response rejects (dispatch may retry or fall
 * back); one in the body resolves with `bodyError`, as reading a `request` body fails after `request` has
 * answered.
 */
function requestText(deployment: Deployment, options: Dispatcher.RequestOptions): Promise<TextResponse> {
  return new Promise((resolve, reject) => callUpstream(deployment, options, new TextCall(options.signal as unknown as ClientSignal, resolve, reject)));
}

class TextCall extends UpstreamCall<TextResponse> {
  #statusCode = 0;
  #headers: IncomingHttpHeaders = {};
  readonly #parts: Buffer[] = [];

  protected start(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#statusCode = statusCode;
    this.#headers = headers;
  }

  protected data(chunk: Buffer): void {
    this.#parts.push(chunk);
  }

  protected end(): void {
    this.resolve({ statusCode: this.#statusCode, headers: this.#headers, text: this.#text(), bodyError: null });
  }

  protected fail(error: Error): void {
    if (this.#statusCode === 0) this.reject(error);
    else this.resolve({ statusCode: this.#statusCode, headers: this.#headers, text: this.#text(), bodyError: error });
  }

  #text(): string {
    const parts = this.#parts;
    const decoded = (parts.length === 1 ? parts[0]! : Buffer.concat(parts)).toString('utf8');
    // As undici's body.text(): a byte-order mark is not part of the text.
    return decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  }
}

/** The turn's id goes along as `x-request-id`, so a model server's logs and svc's ledger name a request alike. */
function upstreamHeaders(deployment: Deployment, requestId: string, accept = 'application/json, text/event-stream'): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept, 'x-request-id': requestId };
  if (deployment.authorization) headers.authorization = deployment.authorization;
  return headers;
}
