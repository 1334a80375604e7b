/**
 * Chat calls through undici's `Pool` for the origin (`gateway.upstreamClient: undici`), the pool the media
 * executors already call through, instead of svc's own client (`http1-pool.ts`). It keeps `Http1Pool`'s
 * contract, so `dispatch.ts` cannot tell the two apart: the handler hears `onRequestStart` at once (undici
 * says it only when the request is about to be written, after a queue or a connect), and a call aborted
 * before that fails with `RequestNotSentError` — nothing reached the upstream, so nothing is billed — while
 * undici, told at its `onRequestStart`, drops the request unsent. Timeouts, keep-alive and the connection
 * cap are the pool's (model.registry.ts sets them as for `Http1Pool`); errors are undici's own.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { errors, type Dispatcher, type Pool } from 'undici';
import { RequestNotSentError, type Http1Request } from './http1-pool.ts';

/** What chat calls are sent through: svc's `Http1Pool`, or undici's pool behind `UndiciChatClient`. */
export interface ChatClient {
  /** Sends `request`; `handler` hears the reply (undici's handler API), starting with `onRequestStart`, synchronously. */
  dispatch(request: Http1Request, handler: Dispatcher.DispatchHandler): boolean;
  close(): Promise<void>;
}

export class UndiciChatClient implements ChatClient {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  dispatch(request: Http1Request, handler: Dispatcher.DispatchHandler): boolean {
    const call = new UndiciCall(handler);
    handler.onRequestStart?.(call, {});
    if (call.over) return true;
    return this.#pool.dispatch({ path: request.path, method: request.method as Dispatcher.HttpMethod, headers: request.headers, body: request.body }, call);
  }

  /** The pool is the registry's, closed with it. */
  async close(): Promise<void> {}
}

/**
 * One call: undici's handler on one side, the controller the caller's handler holds on the other. Pause,
 * resume and abort reach undici's controller once undici has one; until then they are remembered.
 */
class UndiciCall implements Dispatcher.DispatchHandler, Dispatcher.DispatchController {
  readonly #handler: Dispatcher.DispatchHandler;
  /** undici's controller, from the moment the request is handed to a connected socket. */
  #upstream: Dispatcher.DispatchController | null = null;
  #aborted = false;
  #paused = false;
  #reason: Error | null = null;
  over = false;

  constructor(handler: Dispatcher.DispatchHandler) {
    this.#handler = handler;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get paused(): boolean {
    return this.#paused;
  }

  get reason(): Error | null {
    return this.#reason;
  }

  abort(reason: Error): void {
    if (this.over || this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    if (this.#upstream) {
      this.#upstream.abort(reason);
      return;
    }
    // Queued in the pool or waiting for its connection: undici drops it unsent when it comes to it.
    this.over = true;
    this.#handler.onResponseError?.(this, new RequestNotSentError(reason));
  }

  pause(): void {
    this.#paused = true;
    this.#upstream?.pause();
  }

  resume(): void {
    this.#paused = false;
    this.#upstream?.resume();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#aborted) {
      controller.abort(this.#reason ?? new errors.RequestAbortedError());
      return;
    }
    this.#upstream = controller;
    if (this.#paused) controller.pause();
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    if (!this.over) this.#handler.onResponseStart?.(this, statusCode, headers, statusMessage);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.over) this.#handler.onResponseData?.(this, chunk);
  }

  onResponseEnd(_controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    if (this.over) return;
    this.over = true;
    this.#handler.onResponseEnd?.(this, trailers);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.over) return;
    this.over = true;
    this.#handler.onResponseError?.(this, error);
  }
}
