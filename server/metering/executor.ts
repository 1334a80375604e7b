/**
 * How a metered product plugs into the pipeline. A product is one executor file (chat:
 * `modules/gateway/chat.executor.ts`) plus a *planner* on each surface that accepts it: the planner
 * validates the request and names the executor, the model, the worst case and the call state; the
 * pipeline authenticates, checks the payer's entitlement, admits, runs `execute` and settles.
 *
 *   const plan = chatExecutor.plan(body);            // validate + route → TurnPlan
 *   await pipeline.serve(request, reply, () => plan); // authenticate → admit → execute → settle
 */
import type { FastifyBaseLogger } from 'fastify';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Bilingual } from '../errors/app-error.ts';
import type { Metered, MeteredModel, Product, Turn } from './turn.ts';

/** Raised when the client goes away; undici accepts it as an abort signal (far cheaper than an AbortController). */
export interface ClientSignal {
  readonly aborted: boolean;
  once(event: 'abort', listener: () => void): unknown;
  off(event: 'abort', listener: () => void): unknown;
}

/**
 * The request an HTTP surface hands the pipeline: a Fastify request, or the chat lane's own
 * (`http/chat-lane.ts`, which serves the hot path ahead of Fastify).
 */
export interface HttpRequest {
  readonly id: string;
  readonly ip: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
  /**
   * The body's bytes as sent, when the surface kept them (the chat lane): the upstream body is made from them.
   * The surface that uses them takes them (sets this to undefined), so a long stream does not keep them.
   */
  rawBody?: Buffer | undefined;
  readonly log: FastifyBaseLogger;
}

/** What executors write a reply with: the part of Fastify's reply they use, which the chat lane's provides too. */
export interface HttpReply {
  readonly raw: ServerResponse;
  /** The executor writes `raw` itself (streams). */
  hijack(): unknown;
  /**
   * `hijack`, then the status line and the headers (the reply's own, then these) written in one go. The chat
   * lane's reply has it; for Fastify's, `writeRawHead` does `hijack` and `raw.writeHead`.
   */
  head?(status: number, headers: Record<string, string>): void;
  header(name: string, value: string): HttpReply;
  headers(values: Record<string, string>): HttpReply;
  type(contentType: string): HttpReply;
  /** Ends the reply with this body (status 200 unless set). */
  send(body: string): unknown;
}

export interface Exchange {
  signal: ClientSignal;
  /** The HTTP reply to write to, when the surface is HTTP (chat, audio); null when the output is returned (MCP). */
  reply: HttpReply | null;
  /**
   * A long reply (a turn with `progress`) calls this once, when its first token has gone out: its crash
   * checkpoint is written within milliseconds rather than at the next round.
   */
  firstToken?: () => void;
  /**
   * An executor calls this, and awaits what it returns, right before it writes its reply's last bytes
   * (`send`, `raw.end`), once the turn is what it will be billed as (`metered`, `status`): the turn is settled
   * there and then, and the promise resolves once its final checkpoint is in Redis's socket (settlement.ts),
   * so a client that has the whole reply was never ahead of its ledger row. A turn whose usage is still
   * unknown (settlement measures it) is left to the pipeline's own settlement (nothing to await).
   */
  finishing?: (turn: Turn) => Promise<void> | undefined;
}

export interface Executor<Call, Output = void> {
  /**
   * Does the work and answers: writes to `exchange.reply` (HTTP surfaces) or returns the output. Sets
   * `turn.metered`, `turn.deployment`, `turn.upstreamStatus` and `turn.output` as it goes. Throws an
   * `UpstreamFailure` (refunded when nothing reached the client) or an `AppError`.
   */
  execute(turn: Turn, call: Call, exchange: Exchange): Promise<Output>;
  /** What was produced, when `turn.metered` is still null at settlement; sets `turn.estimated` if it counted. */
  measure?(turn: Turn, call: Call): Promise<Metered>;
  /**
   * What a long stream has delivered so far, for the crash checkpoints: asked every second for every open
   * stream, so it reads counters and never tokenizes (estimates are fine; never more than was delivered).
   */
  progress?(turn: Turn, call: Call): Metered;
  /**
   * Why the worst case is what it is and how the client can lower it, for the 402 it may cause
   * ("max_tokens is 4096 …; lower max_tokens"). Asked only then: nothing is built on the happy path.
   */
  describeWorstCase?(call: Call): Bilingual;
}

/** A validated, routed request: everything admission needs, and the executor's own state. */
export interface TurnPlan<Call, Output = void> {
  executor: Executor<Call, Output>;
  product: Product;
  model: MeteredModel;
  /** Holds a concurrent-stream slot (long-lived replies). */
  stream: boolean;
  /** Upper bound of what the turn can consume: reserved before execution. */
  worstCase: Metered;

  call: Call;
}

/**
 * Takes `reply` over for an executor that writes the body itself, and writes its status line and headers.
 *
 * Node builds a response's head by appending each header to a string and keeps that string (`_header`) for
 * the response's life: for a stream's dozen headers a tree of ~50 small strings, promoted with the stream
 * (~1.5 KB). Measuring its UTF-8 length makes V8 flatten it in place, which leaves one string of the same
 * text.
 */
export function writeRawHead(reply: HttpReply, status: number, headers: Record<string, string>): void {
  if (reply.head) reply.head(status, headers);
  else {
    reply.hijack();
    reply.raw.writeHead(status, headers);
  }
  const head = (reply.raw as ServerResponse & { _header?: unknown })._header;
  if (typeof head === 'string') Buffer.byteLength(head);
}
