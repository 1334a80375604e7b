/**
 * `POST /v1/chat/completions` — the hot path (DESIGN §2, STYLE §8), as named steps:
 *
 *   authenticate → validate → route → admit (rate limits + stream cap + reservation: one Redis round trip)
 *   → proxy (undici; retry/fallback only before the first byte) → settle (in `finally`, off the critical path)
 *
 * No ORM unit of work, no GraphQL. Admission fails closed (503) when Redis or the database is away.
 *
 * A `200` carries `server-timing: auth;dur=…, admit;dur=…, upstream;dur=…` (milliseconds): what the
 * gateway's own steps took, so a client (and the benchmark) can tell svc's time from the model server's.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { AppError } from '../../errors/app-error.ts';
import type { ErrorCode } from '../../errors/codes.ts';
import type { Principal } from '../identity/principal.ts';
import type { Deployment, RoutedModel } from '../model/model.registry.ts';
import { rateLimitedError, rateLimitHeaders } from '../rate-limit/rate-limit.service.ts';
import { costMicros } from '../usage/pricing.ts';
import type { ReservationRef } from '../usage/pool.store.ts';
import type { LedgerStatus } from '../usage/settlement.ts';
import type { ChatGateway } from './chat.gateway.ts';
import { validateChatRequest, type ChatBody } from './chat.validate.ts';
import { StreamRewriter, type UpstreamUsage } from './stream-rewriter.ts';

/** Everything one request carries from admission to settlement. */
export interface Turn {
  requestId: string;
  started: number;
  /** Milliseconds spent authenticating and admitting; `upstreamFrom` is when dispatch began. */
  authMs: number;
  admitMs: number;
  upstreamFrom: number;
  /** When the turn must end (`performance.now()` clock): before its reservation can expire. */
  deadline: number;
  principal: Principal;
  body: ChatBody;
  model: RoutedModel;
  stream: boolean;
  includeUsage: boolean;
  /** Upper bound of prompt tokens (request bytes: a token is at least one byte). */
  promptBound: number;
  /** Upper bound of output tokens (n × max_tokens). */
  outputBound: number;
  reservedMicros: number;
  ref: ReservationRef | null;
  deployment: Deployment | null;
  upstreamStatus: number | null;
  usage: UpstreamUsage | null;
  /** `usage` was counted with the tokenizer, not reported by the upstream. */
  estimated: boolean;
  /** Produced text, when usage has to be estimated. */
  produced: string[] | null;
  /** Streams: where the produced text is, parsed only if it has to be counted. */
  rewriter: StreamRewriter | null;
  /** Anything reached the client. */
  output: boolean;
  status: LedgerStatus;
  settled: boolean;
}

/** Raised when the client goes away; `aborted` is checked the way an AbortSignal's would be. */
class ClientAbort extends EventEmitter {
  aborted = false;
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

class UpstreamFailure extends Error {
  readonly code: ErrorCode;
  readonly upstreamStatus: number | null;
  constructor(code: ErrorCode, message: string, upstreamStatus: number | null, cause?: unknown) {
    super(message, { cause });
    this.code = code;
    this.upstreamStatus = upstreamStatus;
  }
}

const windowAdjective = { day: 'daily', week: 'weekly', month: 'monthly' } as const;

const channels: Record<string, string> = { web_session: 'web', session_token: 'cli', api_key: 'api', enterprise_key: 'enterprise' };

export async function handleChat(gw: ChatGateway, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const started = performance.now();
  const principal = await authenticate(gw, request.headers.authorization);
  const authenticated = performance.now();
  const body = validate(gw, request.body);
  const model = route(gw, body, principal);
  const turn = newTurn(gw, request, principal, body, model, started);
  const admitting = performance.now();
  const rate = await admit(gw, turn, request.ip);
  turn.authMs = authenticated - started;
  turn.upstreamFrom = performance.now();
  turn.admitMs = turn.upstreamFrom - admitting;
  // undici accepts an EventEmitter as its abort signal: far cheaper per request than an AbortController.
  const abort = new ClientAbort();
  const onClose = () => {
    if (!reply.raw.writableFinished) abort.abort();
  };
  reply.raw.once('close', onClose);
  // A client that hung up while we were admitting it: 'close' has already fired.
  if (reply.raw.destroyed) abort.abort();
  try {
    if (turn.stream) await proxyStream(gw, turn, reply, abort, rate);
    else await proxyJson(gw, turn, reply, abort, rate);
  } catch (error) {
    if (abort.aborted) {
      // The client went away: nobody to answer; the upstream request is already aborted. If nothing was
      // sent upstream yet, nothing was consumed: refund in full.
      turn.status = turn.deployment ? 'client_disconnected' : 'refunded';
      reply.hijack();
      reply.raw.destroy();
      return;
    }
    if (turn.output) {
      request.log.warn({ err: error }, 'stream failed after output');
      reply.raw.destroy();
      return;
    }
    throw upstreamError(turn, error);
  } finally {
    reply.raw.off('close', onClose);
    settle(gw, turn);
  }
}

// ── authenticate ─────────────────────────────────────────────────────────────────────────────

function authenticate(gw: ChatGateway, authorization: string | undefined): Promise<Principal> {
  return gw.authenticate(authorization);
}

// ── validate ─────────────────────────────────────────────────────────────────────────────────

function validate(gw: ChatGateway, raw: unknown): ChatBody {
  return validateChatRequest(raw, gw.validationLimits);
}

// ── route ────────────────────────────────────────────────────────────────────────────────────

function route(gw: ChatGateway, body: ChatBody, principal: Principal): RoutedModel {
  const limits = gw.usage.limitsFor(principal.payer.package);
  const model = gw.registry.get(body.model);
  if (!model || (limits.models !== null && !limits.models.has(body.model))) {
    const valid = gw.modelIdsFor(principal.payer.package);
    throw new AppError('model_not_found', `The model ${JSON.stringify(body.model)} does not exist or is not available on your plan. Valid ids: ${valid.join(', ')}.`, {
      param: 'model',
      debug: { productModel: body.model },
    });
  }
  if (model.deployments.length === 0) {
    throw new AppError('upstream_unavailable', `No upstream is configured for ${model.id}.`, { stage: 'routing', debug: { productModel: model.id, quotaRefunded: true } });
  }
  return model;
}

function newTurn(gw: ChatGateway, request: FastifyRequest, principal: Principal, body: ChatBody, model: RoutedModel, started: number): Turn {
  const stream = body.stream === true;
  const length = Number(request.headers['content-length']);
  const promptBound = Number.isFinite(length) && length > 0 ? length : Buffer.byteLength(JSON.stringify(body.messages));
  const outputBound = (body.n ?? 1) * body.max_tokens;
  return {
    requestId: request.id,
    started,
    authMs: 0,
    admitMs: 0,
    upstreamFrom: started,
    deadline: started + gw.turnLimitMs,
    principal,
    body,
    model,
    stream,
    includeUsage: stream && body.stream_options?.include_usage === true,
    promptBound,
    outputBound,
    reservedMicros: costMicros(model.rates, promptBound, outputBound),
    ref: null,
    deployment: null,
    upstreamStatus: null,
    usage: null,
    estimated: false,
    produced: null,
    rewriter: null,
    output: false,
    status: 'ok',
    settled: false,
  };
}

// ── admit: rate limits, stream cap and the reservation in one atomic step ──────────────────────

async function admit(gw: ChatGateway, turn: Turn, ip: string) {
  if (!gw.settlement.databaseHealthy) {
    throw new AppError('service_unavailable', 'Usage accounting is unavailable (database unreachable); nothing was sent upstream.', { stage: 'quota' });
  }
  const { principal, model } = turn;
  const limits = gw.usage.limitsFor(principal.payer.package);
  const windows = gw.usage.windows.current();
  const rateRules = gw.rateRules(ip, principal, limits.requestsPerMinute);
  let admission;
  try {
    admission = await gw.usage.store.admit({
      requestId: turn.requestId,
      accountId: principal.accountId,
      class: model.class,
      windows,
      reserveMicros: turn.reservedMicros,
      limits: limits.pools[model.class],
      rateRules,
      streamCap: turn.stream ? gw.streamCap : 0,
      ttlMs: gw.reservationTtlMs,
    });
  } catch (error) {
    throw new AppError('service_unavailable', 'Usage accounting is unavailable; nothing was sent upstream. Retry shortly.', { stage: 'quota', cause: error });
  }
  if (admission.ok) {
    turn.ref = { requestId: turn.requestId, accountId: principal.accountId, class: model.class, windows, stream: turn.stream };
    return admission.rate;
  }
  switch (admission.reason) {
    case 'rate_limited':
      throw rateLimitedError(admission.rate.retryAfterMs, { decision: admission.rate });
    case 'stream_cap':
      throw new AppError('rate_limited', `Too many concurrent streams: at most ${admission.cap} per account.`, {
        headers: { 'retry-after': '1' },
        details: { retryAfterSeconds: 1 },
      });
    case 'quota': {
      const window = windows[admission.window];
      const money = gw.money;
      throw new AppError(
        'quota_exceeded',
        `Your ${model.class} ${windowAdjective[admission.window]} pool is exhausted for this request (used ${money(admission.usedMicros).amount} of ${money(admission.limitMicros).amount} ${gw.currency}; this request may cost up to ${money(turn.reservedMicros).amount}). It resets at ${window.resetsAt.toISOString()}.`,
        {
          debug: { productModel: model.id },
          details: {
            quota: {
              class: model.class,
              window: admission.window,
              resetsAt: window.resetsAt.toISOString(),
              used: money(admission.usedMicros),
              limit: money(admission.limitMicros),
              requestMaxCost: money(turn.reservedMicros),
            },
          },
        },
      );
    }
  }
}

// ── proxy ────────────────────────────────────────────────────────────────────────────────────

function upstreamHeaders(deployment: Deployment): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (deployment.authorization) headers.authorization = deployment.authorization;
  return headers;
}

/** Sends the request to the deployments in order until one answers 200. Only called before the first byte. */
async function dispatch(turn: Turn, signal: ClientAbort): Promise<Dispatcher.ResponseData> {
  const { body, model } = turn;
  if (turn.stream) body.stream_options = { include_usage: true };
  else delete body.stream_options;
  let failure: UpstreamFailure | null = null;
  for (const deployment of model.deployments) {
    // A client that left before the first dispatch costs nothing (`turn.deployment` stays null).
    if (signal.aborted && turn.deployment === null) throw new Error('the client went away before dispatch');
    turn.deployment = deployment;
    body.model = deployment.model;
    const payload = JSON.stringify(body);
    // One retry on the same deployment only for a connection that died before answering (stale keep-alive).
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const response = await deployment.pool.request({ path: deployment.path, method: 'POST', headers: upstreamHeaders(deployment), body: payload, signal });
        turn.upstreamStatus = response.statusCode;
        if (response.statusCode === 200) return response;
        const detail = await response.body.text().catch(() => '');
        failure = new UpstreamFailure(statusCode(response.statusCode), `The model server answered ${response.statusCode}.`, response.statusCode, detail.slice(0, 500));
        break;
      } catch (error) {
        if (signal.aborted) throw error;
        failure = classify(error);
        if (!(failure.code === 'upstream_unavailable' && isReset(error) && attempt === 0)) break;
      }
    }
  }
  throw failure!;
}

function statusCode(status: number): ErrorCode {
  if (status === 408 || status === 504) return 'upstream_timeout';
  if (status === 429 || status === 503) return 'upstream_unavailable';
  return 'upstream_error';
}

function isReset(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
}

function classify(error: unknown): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  const code = (error as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT') {
    return new UpstreamFailure('upstream_timeout', 'The model server did not answer in time.', null, error);
  }
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || isReset(error) || code === 'UND_ERR_CLOSED') {
    return new UpstreamFailure('upstream_unavailable', 'The model server is unreachable.', null, error);
  }
  return new UpstreamFailure('upstream_error', 'The model server failed.', null, error);
}

async function proxyJson(gw: ChatGateway, turn: Turn, reply: FastifyReply, signal: ClientAbort, rate: Awaited<ReturnType<typeof admit>>): Promise<void> {
  const response = await dispatch(turn, signal);
  let completion: Record<string, unknown> & { choices?: unknown; usage?: unknown };
  try {
    completion = (await response.body.json()) as typeof completion;
  } catch (error) {
    if (signal.aborted) throw error;
    throw new UpstreamFailure('upstream_error', 'The model server sent an invalid response.', 200, error);
  }
  // Until the whole reply was in hand: a non-streaming client waits for all of it.
  const upstreamMs = performance.now() - turn.upstreamFrom;
  if (!Array.isArray(completion.choices)) throw new UpstreamFailure('upstream_error', 'The model server sent a response without choices.', 200);
  completion.object = 'chat.completion';
  completion.model = turn.model.resolvedId;
  for (const choice of completion.choices as { message?: Record<string, unknown>; logprobs?: unknown }[]) {
    if (choice.logprobs === undefined) choice.logprobs = null;
    if (choice.message && choice.message.refusal === undefined) choice.message.refusal = null;
  }
  const usage = saneUsage(completion.usage, turn);
  if (usage) turn.usage = usage;
  else turn.produced = (completion.choices as { message?: { content?: unknown; tool_calls?: { function?: { arguments?: string } }[] } }[]).flatMap((choice) => [
    typeof choice.message?.content === 'string' ? choice.message.content : '',
    ...(choice.message?.tool_calls ?? []).map((call) => call.function?.arguments ?? ''),
  ]);
  // Clients always get usage: when the upstream omitted it, the estimate — the same one settlement bills.
  completion.usage = usage ?? (await estimateOnce(gw, turn));
  turn.output = true;
  reply
    .headers(rateLimitHeaders(rate))
    .header('server-timing', serverTiming(turn, upstreamMs))
    .type('application/json')
    .send(JSON.stringify(completion));
}

async function proxyStream(gw: ChatGateway, turn: Turn, reply: FastifyReply, signal: ClientAbort, rate: Awaited<ReturnType<typeof admit>>): Promise<void> {
  const rewriter = new StreamRewriter(turn.model.resolvedId, turn.includeUsage);
  turn.rewriter = rewriter;
  // Before the first byte to the client a failure can still fall back; the headers go out with the first event.
  const response = await dispatch(turn, signal);
  // Until the upstream's headers: the stream's own pace is the model's, not the gateway's.
  const timing = serverTiming(turn, performance.now() - turn.upstreamFrom);
  const raw = reply.raw;
  const body = response.body;
  let midStreamError: { code: ErrorCode; message: string } | null = null;
  try {
    for await (const bytes of body as AsyncIterable<Buffer>) {
      const text = rewriter.push(bytes);
      if (text.length > 0) {
        if (!turn.output) {
          reply.hijack();
          raw.writeHead(200, {
            'content-type': 'text/event-stream; charset=utf-8',
            'cache-control': 'no-cache',
            connection: 'keep-alive',
            'x-svc-request-id': turn.requestId,
            'x-request-id': turn.requestId,
            'server-timing': timing,
            ...rateLimitHeaders(rate),
          });
          turn.output = true;
        }
        if (!raw.write(text)) await drained(raw, turn.deadline);
        if (signal.aborted) break;
      }
      if (rewriter.upstreamError) {
        midStreamError = { code: 'upstream_error', message: `The model server failed mid-stream: ${rewriter.upstreamError.message}` };
        break;
      }
      if (rewriter.done) break;
      if (performance.now() > turn.deadline) {
        midStreamError = { code: 'upstream_timeout', message: `The reply took longer than a turn may last (${Math.round(gw.turnLimitMs / 1000)} s) and was cut short.` };
        break;
      }
    }
  } catch (error) {
    if (signal.aborted || !turn.output) throw error;
    const failure = classify(error);
    midStreamError = { code: failure.code, message: `${failure.message} The stream was cut short.` };
  }
  const usage = saneUsage(rewriter.usage, turn);
  if (usage) turn.usage = usage;
  if (signal.aborted) throw new DOMException('client went away', 'AbortError');
  if (!turn.output) {
    // The upstream ended (or failed) without a single event: nothing was sent, so this is a clean failure.
    throw new UpstreamFailure(midStreamError?.code ?? 'upstream_error', midStreamError?.message ?? 'The model server ended the stream without output.', 200);
  }
  if (!midStreamError && !rewriter.done && !rewriter.finished) {
    midStreamError = { code: 'upstream_error', message: 'The model server ended the stream early.' };
  }
  if (midStreamError) {
    turn.status = rewriter.deltas > 0 ? 'upstream_failed' : 'refunded';
    body.destroy();
    raw.end(`data: ${JSON.stringify({ error: { message: midStreamError.message, type: 'api_error', code: midStreamError.code, param: null } })}\n\n`);
    return;
  }
  raw.end(rewriter.end(usage ?? (turn.includeUsage ? await estimateOnce(gw, turn) : null)));
}

/** The `server-timing` header (milliseconds, three decimals). */
function serverTiming(turn: Turn, upstreamMs: number): string {
  return `auth;dur=${turn.authMs.toFixed(3)}, admit;dur=${turn.admitMs.toFixed(3)}, upstream;dur=${upstreamMs.toFixed(3)}`;
}

/** Waits until the client takes more or leaves; one that stops reading is let go at the turn's deadline. */
function drained(res: ServerResponse, deadline: number): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => res.destroy(), Math.max(0, deadline - performance.now()));
    const done = () => {
      clearTimeout(timer);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Upstream usage if it is plausible; null (→ estimate) when absent, negative, or beyond what was asked for. */
function saneUsage(value: unknown, turn: Turn): UpstreamUsage | null {
  if (!value || typeof value !== 'object') return null;
  const { prompt_tokens: prompt, completion_tokens: completion } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(prompt) || !Number.isSafeInteger(completion)) return null;
  const p = prompt as number;
  const c = completion as number;
  if (p < 0 || c < 0 || p > turn.promptBound || c > turn.outputBound) return null;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/** Usage counted with the tokenizer, once: what the client is told is what settlement bills. */
async function estimateOnce(gw: ChatGateway, turn: Turn): Promise<UpstreamUsage> {
  if (!turn.usage) {
    turn.usage = await gw.estimateUsage(turn);
    turn.estimated = true;
  }
  return turn.usage;
}

/** Maps whatever ended the proxy step to the envelope (before the first byte) — always with the refund. */
function upstreamError(turn: Turn, error: unknown): unknown {
  turn.status = 'refunded';
  if (error instanceof AppError) return error;
  const failure = classify(error);
  return new AppError(failure.code, undefined, {
    cause: failure.cause ?? error,
    debug: {
      productModel: turn.model.id,
      upstreamStatus: failure.upstreamStatus,
      upstreamHost: turn.deployment?.label ?? null,
      quotaRefunded: true,
    },
  });
}

// ── settle ───────────────────────────────────────────────────────────────────────────────────

/** Exactly once per admitted request, on every exit path. The work happens off the response path. */
function settle(gw: ChatGateway, turn: Turn): void {
  if (turn.settled || turn.ref === null) return;
  turn.settled = true;
  void finalize(gw, turn).catch((error: unknown) => gw.log.error({ err: error, requestId: turn.requestId }, 'settlement failed'));
}

async function finalize(gw: ChatGateway, turn: Turn): Promise<void> {
  const latencyMs = performance.now() - turn.started;
  let inputTokens = 0;
  let outputTokens = 0;
  if (turn.status !== 'refunded') {
    const usage = await estimateOnce(gw, turn);
    inputTokens = usage.prompt_tokens;
    outputTokens = usage.completion_tokens;
  }
  const cost = Math.min(costMicros(turn.model.rates, inputTokens, outputTokens), turn.reservedMicros);
  const { principal } = turn;
  gw.settlement.record(
    {
      requestId: turn.requestId,
      accountId: principal.accountId,
      credentialKind: principal.credential.kind,
      credentialId: principal.credential.id,
      channel: channels[principal.credential.kind] ?? 'api',
      model: turn.model.id,
      routedModel: turn.model.resolvedId,
      deployment: turn.deployment?.label ?? null,
      class: turn.model.class,
      stream: turn.stream,
      inputTokens,
      outputTokens,
      estimated: turn.estimated,
      costMicros: cost,
      reservedMicros: turn.reservedMicros,
      status: turn.status,
      upstreamStatus: turn.upstreamStatus,
      latencyMs,
    },
    turn.ref,
  );
}
