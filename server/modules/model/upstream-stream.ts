/**
 * A streaming upstream reply taken straight from undici's dispatch API (`dispatchStream`), chunk by chunk,
 * by one taker (`relay`) — without the Readable that `request()` builds around a body. The chat stream
 * relays ~100 chunks per request; through a Readable each one went through its buffer, `emit`, `read`
 * and flowing-mode bookkeeping before the taker saw it.
 *
 * The taker answers each chunk: `more`; `stop` (the upstream call is aborted); `done` (the rest is read
 * and dropped, so a keep-alive connection goes back to the pool); or a promise, while which the upstream
 * is paused (the client's backpressure). Chunks that arrive before a taker, or while it waits, queue.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { errors, type Dispatcher } from 'undici';

export type Take = (bytes: Buffer) => 'more' | 'stop' | 'done' | Promise<void>;

const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});

export class UpstreamStream {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly #controller: Dispatcher.DispatchController;
  readonly #queue: Buffer[] = [];
  #take: Take | null = null;
  /** The taker's promise is pending: the upstream is paused and chunks queue. */
  #waiting = false;
  /** After `done`: what is left is read and dropped. */
  #dropping = false;
  #ended = false;
  #error: Error | null = null;
  #settle: ((error?: unknown) => void) | null = null;

  constructor(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders) {
    this.#controller = controller;
    this.statusCode = statusCode;
    // Only an error reply's headers are read (`retry-after`). A 200's are let go: its body is relayed for seconds,
    // and the header object and its strings would be promoted with it, costing every scavenge while it lives.
    this.headers = statusCode === 200 ? NO_HEADERS : headers;
  }

  /** Hands every chunk to `take` until the body ends (resolves), fails (rejects) or `take` stops it. */
  relay(take: Take): Promise<void> {
    this.#take = take;
    return new Promise((resolve, reject) => {
      let over = false;
      this.#settle = (error) => {
        if (over) return;
        over = true;
        this.#take = null;
        if (error === undefined) resolve();
        else reject(error as Error);
      };
      this.#pump();
    });
  }

  /** The whole body as text (an error reply's). */
  async text(): Promise<string> {
    const parts: Buffer[] = [];
    await this.relay((bytes) => {
      parts.push(bytes);
      return 'more';
    });
    return Buffer.concat(parts).toString('utf8');
  }

  /** Aborts the upstream call, unless its body has already ended. */
  destroy(): void {
    if (!this.#ended && this.#error === null) this.#controller.abort(new errors.RequestAbortedError());
  }

  /** From the dispatch handler. */
  data(bytes: Buffer): void {
    if (this.#dropping) return;
    if (this.#take === null || this.#waiting || this.#queue.length > 0) this.#queue.push(bytes);
    else this.#give(bytes);
  }

  end(): void {
    this.#ended = true;
    this.#pump();
  }

  fail(error: Error): void {
    if (this.#dropping) return; // after `done` or `stop`, nobody is listening
    this.#error = error;
    this.#pump();
  }

  #pump(): void {
    while (this.#take !== null && !this.#waiting && this.#queue.length > 0) this.#give(this.#queue.shift()!);
    if (this.#take === null || this.#waiting || this.#queue.length > 0) return;
    if (this.#error !== null) this.#settle!(this.#error);
    else if (this.#ended) this.#settle!();
  }

  #give(bytes: Buffer): void {
    let next;
    try {
      next = this.#take!(bytes);
    } catch (error) {
      this.#stop(error);
      return;
    }
    if (next === 'more') return;
    if (next === 'stop') this.#stop();
    else if (next === 'done') {
      this.#dropping = true;
      this.#queue.length = 0;
      this.#settle!();
    } else {
      this.#waiting = true;
      this.#controller.pause();
      next.then(
        () => {
          this.#waiting = false;
          if (this.#take === null) return;
          this.#controller.resume();
          this.#pump();
        },
        (error: unknown) => this.#stop(error),
      );
    }
  }

  /** Ends the relay (with `error`, if any) and aborts the upstream call. */
  #stop(error?: unknown): void {
    this.#dropping = true;
    this.#queue.length = 0;
    this.#settle!(error);
    this.destroy();
  }
}
