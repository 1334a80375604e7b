/**
 * The chat executor: `POST /v1/chat/completions` for text models, over the metering pipeline. `plan`
 * routes a validated request (model → deployments, worst case = prompt bytes + n × max_tokens);
 * `execute` proxies it with undici (fallback only before the first byte), non-streaming (a reply in the usual
 * shape forwarded with its model swapped, `json-reply.ts`) or as SSE re-framed for the official SDKs
 * (`stream-rewriter.ts`); `measure` counts tokens when the upstream reported none.
 * The same executor serves `/v1/responses` and `/v1/completions`: their planners hand it a chat request and
 * a framing (`framing.ts`) that re-frames the reply. Tools with `stream: true` (`gateway.toolsWithStream:
 * emulate`, and the Responses API) are sent upstream without streaming and replayed to the client as SSE.
 * `complete` and `answer` are those two halves apart, for a caller that acts between them (hosted search,
 * `hosted-search.ts`, runs the searches the model asked for and asks it again before answering).
 *
 * A `200` carries `server-timing: auth;dur=…, admit;dur=…, upstream;dur=…` (milliseconds): what the
 * gateway's own steps took, so a client (and the benchmark) can tell svc's time from the model server's.
 *
 * This file is the pattern for a new metered product: a `plan` that returns a `TurnPlan`, an `execute`
 * that answers and fills in `turn.metered`, and its registration on a surface (`gateway.rest.ts`).
 */
import type { Writable } from 'node:stream';
import { AppError, bilingual, type Bilingual } from '../../errors/app-error.ts';
import type { ErrorCode } from '../../errors/codes.ts';
import { framesChunks } from '../../http/chunked.ts';
import { envelopeFor } from '../../http/envelope.ts';
import { writeRawHead, type Exchange, type Executor, type TurnPlan } from '../../metering/executor.ts';
import { costHeaders, serverTiming, type Metered, type Turn } from '../../metering/turn.ts';
import { costStamp } from '../../metering/pricing.ts';
import { classifyUpstreamError, UpstreamFailure } from '../../metering/upstream-failure.ts';
import { dispatchStream, dispatchText, type UpstreamRequest } from '../model/dispatch.ts';
import { forwards, type FieldFilter, type ModelRegistry, type RoutedModel } from '../model/model.registry.ts';
import { rateLimitHeaders } from '../../rate-limit/rate-limit.service.ts';
import { isOwnedField, legacyFunctions, type ChatBody } from './chat.validate.ts';
import { asLegacyFunctionCall, chatFraming, replayAsChunks, type ChatCompletion, type CompletionChoice, type ReplyFraming, type StreamFramer } from './framing.ts';
import { saneUsage } from './json-reply.ts';
import type { UpstreamUsage } from './stream-rewriter.ts';
import { spliceUpstreamBody, type ClientBody } from './wire-body.ts';
import { estimateTokens } from './token-count.ts';
import { promptTexts, promptTokens, quickPromptTokens } from './token-estimate.ts';

/** One chat call's own state, next to the turn the pipeline meters. */
export interface ChatCall {
  body: ChatBody;
  model: RoutedModel;
  includeUsage: boolean;
  /** Upper bound of prompt tokens (request bytes: a token is at least one byte). */
  promptBound: number;
  /** Upper bound of output tokens (n × max_tokens). */
  outputBound: number;
  /** The prompt's tokens by `quickPromptTokens`, once a crash checkpoint needed them. */
  promptEstimate?: number;
  /** Produced text of a non-streaming reply, when usage has to be estimated. */
  produced: string[] | null;
  /** Streams: where the produced text is, parsed only if it has to be counted. */
  rewriter: StreamFramer | null;
  /** What the client's API looks like: chat completions, the Responses API, legacy completions. */
  framing: ReplyFraming;
  /** A stream with tools: the upstream is called without streaming and its reply replayed as SSE. */
  replayed: boolean;
  /** The client's bytes and fields as sent, when the surface kept them: the upstream body is spliced from them. */
  client: ClientBody | null;
}

/** What a client (and, through it, the operator) is told when no model server is set up: what to set, not "retry". */
function notConfigured(model: RoutedModel): AppError {
  const message = bilingual(
    'No model server is configured for {model}, so it cannot answer (retrying will not help): the operator sets SVC_UPSTREAM_URL to an OpenAI-compatible server (such as http://127.0.0.1:11434/v1 for Ollama), or models.{configured}.deployments in the config file, and restarts svc. Nothing was billed.',
    '{model} 尚未配置模型服务器，因此无法回答（重试也无济于事）：需由运维人员将 SVC_UPSTREAM_URL 设为兼容 OpenAI 接口的服务器（例如 Ollama 的 http://127.0.0.1:11434/v1），或在配置文件中设置 models.{configured}.deployments，然后重启 svc。本次未计费。',
    { model: model.id, configured: model.resolvedId },
  );
  return new AppError('upstream_not_configured', message, { stage: 'routing', debug: { productModel: model.id, quotaRefunded: true } });
}

/** An embedding model asked for text: it makes none, on any of the text APIs. */
function embeddingOnly(model: RoutedModel): AppError {
  const message = bilingual('{model} is an embedding model: it answers POST /v1/embeddings only. Use a chat model here (GET /v1/models lists them).', '{model} 是向量嵌入模型，只能用于 POST /v1/embeddings。此处请改用对话模型（GET /v1/models 会列出）。', {
    model: model.id,
  });
  return new AppError('invalid_request', message, { param: 'model', debug: { productModel: model.id } });
}

export class ChatExecutor implements Executor<ChatCall> {
  readonly #registry: ModelRegistry;

  constructor(registry: ModelRegistry) {
    this.#registry = registry;
  }

  /**
   * Routes a validated request. `bodyBytes` is the request's size (the prompt bound; null = measure the
   * body). `framing` is how the reply is framed for the client's API; `client` what the client sent, when
   * the upstream body may be made from it (`wire-body.ts`).
   */
  plan(body: ChatBody, bodyBytes: number | null, unknownModel: () => AppError, framing: ReplyFraming = chatFraming, client: ClientBody | null = null): TurnPlan<ChatCall> {
    const model = this.#registry.get(body.model);
    if (!model) throw unknownModel();
    if (model.embedding) throw embeddingOnly(model);
    if (model.deployments.length === 0) throw notConfigured(model);
    const stream = body.stream === true;
    const promptBound = bodyBytes !== null && bodyBytes > 0 ? bodyBytes : Buffer.byteLength(JSON.stringify(body));
    const outputBound = (body.n ?? 1) * body.max_tokens;
    const includeUsage = stream && (framing.alwaysUsage || body.stream_options?.include_usage === true);
    const replayed = stream && body.tools !== undefined && body.tools.length > 0;
    return {
      executor: this,
      product: 'chat',
      model,
      stream,
      worstCase: { inputTokens: promptBound, outputTokens: outputBound },
      call: { body, model, includeUsage, promptBound, outputBound, produced: null, rewriter: null, framing, replayed, client },
    };
  }

  execute(turn: Turn, call: ChatCall, exchange: Exchange): Promise<void> {
    if (call.body.stream !== true) return this.#proxyJson(turn, call, exchange);
    return call.replayed ? this.#replayStream(turn, call, exchange) : this.#proxyStream(turn, call, exchange);
  }

  /** Usage counted with the tokenizer, once: what the client is told is what settlement bills. */
  async measure(turn: Turn, call: ChatCall): Promise<Metered> {
    if (!turn.metered) {
      const usage = await estimateChatUsage(call);
      turn.metered = { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens };
      turn.estimated = true;
    }
    return turn.metered;
  }

  describeWorstCase(call: ChatCall): Bilingual {
    const { body, outputBound, promptBound } = call;
    const name = call.framing.maxTokensName;
    const perChoice = outputBound === body.max_tokens;
    return {
      en: `${name} is ${body.max_tokens}${perChoice ? '' : ` for each of n = ${body.n} choices`} and the prompt may count up to ${promptBound} tokens; lower ${name}`,
      zh: `${name} 为 ${body.max_tokens}${perChoice ? '' : `（n = ${body.n} 个候选各计一次）`}，且提示词最多可能计 ${promptBound} 个 token；请调低 ${name}`,
    };
  }

  /**
   * What a stream has delivered, for its crash checkpoints: the upstream's usage once it came, else a token
   * per content delta sent (what model servers stream; one carrying several tokens is billed as one, never
   * more than was sent) and the prompt's quick estimate. Counters only: no tokenizer on the way.
   */
  progress(turn: Turn, call: ChatCall): Metered {
    if (turn.metered) return turn.metered;
    const rewriter = call.rewriter;
    const usage = rewriter?.usage ? saneUsage(rewriter.usage, call) : null;
    if (usage) return { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens };
    call.promptEstimate ??= Math.min(quickPromptTokens(call.body.messages), call.promptBound);
    return { inputTokens: call.promptEstimate, outputTokens: Math.min(rewriter?.deltas ?? 0, call.outputBound) };
  }

  /**
   * The upstream request for this call (its body for each deployment: the model name differs): the client's
   * bytes with svc's changes spliced in where they allow it, else the body serialised.
   */
  #request(call: ChatCall): UpstreamRequest {
    const { body, client } = call;
    return {
      endpoint: '/chat/completions',
      body: (deployment) => {
        body.model = deployment.model;
        if (deployment.forward !== null) return forwardedJson(body, deployment.forward);
        return (client !== null && spliceUpstreamBody(client, body)) || JSON.stringify(body);
      },
    };
  }

  /** A non-streaming upstream call's reply, read whole. */
  async #read(turn: Turn, call: ChatCall, exchange: Exchange): Promise<string> {
    const response = await dispatchText(turn, call.model.deployments, exchange.signal, this.#request(call));
    if (response.bodyError === null) return response.text;
    if (exchange.signal.aborted) throw response.bodyError;
    throw new UpstreamFailure('upstream_error', 'The model server sent an invalid response.', 200, response.bodyError);
  }

  /** A non-streaming reply parsed: the completion with svc's fixes, usage set (upstream's, or the estimate). */
  async #complete(turn: Turn, call: ChatCall, text: string): Promise<ChatCompletion> {
    let completion: (Record<string, unknown> & { choices?: unknown; usage?: unknown }) | null;
    try {
      completion = JSON.parse(text) as typeof completion;
    } catch (error) {
      throw new UpstreamFailure('upstream_error', 'The model server sent an invalid response.', 200, error);
    }
    if (!Array.isArray(completion?.choices)) throw new UpstreamFailure('upstream_error', 'The model server sent a response without choices.', 200);
    completion.object = 'chat.completion';
    completion.model = call.model.resolvedId;
    for (const choice of completion.choices as { message?: Record<string, unknown>; logprobs?: unknown }[]) {
      if (choice.logprobs === undefined) choice.logprobs = null;
      if (choice.message && choice.message.refusal === undefined) choice.message.refusal = null;
    }
    const usage = saneUsage(completion.usage, call);
    if (usage) turn.metered = { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens };
    else {
      call.produced = (completion.choices as { message?: { content?: unknown; tool_calls?: { function?: { arguments?: string } }[] } }[]).flatMap((choice) => [
        typeof choice.message?.content === 'string' ? choice.message.content : '',
        ...(choice.message?.tool_calls ?? []).map((toolCall) => toolCall.function?.arguments ?? ''),
      ]);
    }
    // Clients always get usage: when the upstream omitted it, the estimate — the same one settlement bills.
    completion.usage = usage ?? asUsage(await this.measure(turn, call));
    if (call.body[legacyFunctions]) asLegacyFunctionCall(completion as ChatCompletion);
    return completion as ChatCompletion;
  }

  /**
   * A non-streaming reply. In the usual upstream shape, made from the upstream's text without parsing it
   * (`ReplyFraming.fastJson`: for chat completions the text with the model swapped); otherwise parsed, fixed
   * and framed for the client's API.
   */
  async #proxyJson(turn: Turn, call: ChatCall, exchange: Exchange): Promise<void> {
    delete call.body.stream_options;
    const text = await this.#read(turn, call, exchange);
    // Until the whole reply was in hand: a non-streaming client waits for all of it.
    const upstreamMs = performance.now() - turn.upstreamFrom;
    // Legacy `functions` rewrite the completion itself.
    const fast = call.body[legacyFunctions] ? null : (call.framing.fastJson?.(text, call.model.resolvedId, call) ?? null);
    if (!fast) return this.answer(turn, call, exchange, await this.#complete(turn, call, text), upstreamMs);
    turn.metered = { inputTokens: fast.usage.prompt_tokens, outputTokens: fast.usage.completion_tokens };
    turn.output = true;
    await exchange.finishing?.(turn);
    call.framing.replying?.();
    exchange
      .reply!.headers(turn.rate ? rateLimitHeaders(turn.rate) : {})
      .headers(costHeaders(turn))
      .header('server-timing', serverTiming(turn, upstreamMs))
      .type('application/json')
      .send(fast.body);
  }

  /** Tools with `stream: true`: one non-streaming upstream call, replayed to the client as a proper stream. */
  async #replayStream(turn: Turn, call: ChatCall, exchange: Exchange): Promise<void> {
    const completion = await this.complete(turn, call, exchange);
    await this.answer(turn, call, exchange, completion, performance.now() - turn.upstreamFrom);
  }

  /**
   * One non-streaming upstream call, its reply parsed and fixed, `turn.metered` set: for a caller that acts on
   * the reply before anything is answered (hosted search runs the searches the model asks for).
   */
  async complete(turn: Turn, call: ChatCall, exchange: Exchange): Promise<ChatCompletion> {
    call.body.stream = false;
    delete call.body.stream_options;
    return this.#complete(turn, call, await this.#read(turn, call, exchange));
  }

  /**
   * Answers with a completion in hand, framed for the client's API: as JSON, or, when the client asked for a
   * stream (`call.replayed`), as the stream an upstream would have sent.
   */
  async answer(turn: Turn, call: ChatCall, exchange: Exchange, completion: ChatCompletion, upstreamMs: number): Promise<void> {
    const reply = exchange.reply!;
    if (!call.replayed) {
      const framed = call.framing.json(completion);
      const body = typeof framed === 'string' ? framed : await framed;
      turn.output = true;
      await exchange.finishing?.(turn);
      call.framing.replying?.();
      reply
        .headers(turn.rate ? rateLimitHeaders(turn.rate) : {})
        .headers(costHeaders(turn))
        .header('server-timing', serverTiming(turn, upstreamMs))
        .type('application/json')
        .send(body);
      return;
    }
    completion.id ??= `chatcmpl-${turn.id}`;
    completion.created ??= Math.floor(Date.now() / 1000);
    for (const [index, choice] of (completion.choices as Partial<CompletionChoice>[]).entries()) choice.index ??= index;
    const framer = call.framing.stream(call.model.resolvedId, call.includeUsage);
    call.rewriter = framer;
    const text = framer.push(Buffer.from(replayAsChunks(completion))).toString() + (await framer.end(call.includeUsage ? withCost({ ...completion.usage }, turn) : null));
    turn.output = true;
    await exchange.finishing?.(turn);
    call.framing.replying?.();
    writeRawHead(reply, 200, streamHeaders(turn, serverTiming(turn, upstreamMs)));
    reply.raw.end(text);
  }

  async #proxyStream(turn: Turn, call: ChatCall, exchange: Exchange): Promise<void> {
    const reply = exchange.reply!;
    const signal = exchange.signal;
    // The usage chunk is what settlement bills. A client that asked for it keeps its own object, so its bytes can be sent.
    if (!usageOnly(call.body.stream_options)) call.body.stream_options = { include_usage: true };
    // Before the first byte to the client a failure can still fall back; the headers go out with the first event.
    const body = await dispatchStream(turn, call.model.deployments, signal, this.#request(call));
    // The upstream has its body: what the client sent is not needed for the rest of the stream. The rewriter is
    // made now, off the way to the upstream, so building it does not delay the request the model is waiting for.
    call.client = null;
    const rewriter = call.framing.stream(call.model.resolvedId, call.includeUsage);
    call.rewriter = rewriter;
    // Until the upstream's headers: the stream's own pace is the model's, not the gateway's. The head is built
    // now, while the model works on its first token, and goes out with the first event (~6 µs less before the
    // first token).
    const head = streamHeaders(turn, serverTiming(turn, performance.now() - turn.upstreamFrom));
    const raw = reply.raw;
    let midStreamError: { code: ErrorCode; message: string } | null = null;
    // The turn's deadline as a flag a timer raises, not a clock read per chunk (~0.4 µs each, 100 a stream).
    // Rounded up to 100 ms, so concurrent streams share a few of Node's timer lists (one per duration).
    let overtime = false;
    const deadline = setTimeout(() => (overtime = true), Math.ceil(Math.max(0, turn.deadline - performance.now()) / 100) * 100);
    // Until the first content delta went out: then the crash checkpoints are told, once.
    let firstToken = exchange.firstToken;
    try {
      await body.relay((bytes) => {
        // After the head, the byte path's events come framed as HTTP chunks, for the socket itself (`chunked.ts`).
        const chunked = turn.output && framesChunks(raw);
        const text = rewriter.push(bytes, chunked);
        let written = true;
        if (text.length > 0) {
          if (!turn.output) {
            writeRawHead(reply, 200, head);
            turn.output = true;
            written = raw.write(text);
          } else written = typeof text === 'string' || !chunked ? raw.write(text) : raw.socket!.write(text);
          if (signal.aborted) return 'stop';
          if (firstToken && rewriter.deltas > 0) {
            firstToken();
            firstToken = undefined;
          }
        }
        if (rewriter.upstreamError) {
          midStreamError = { code: 'upstream_error', message: `The model server failed mid-stream: ${rewriter.upstreamError.message}` };
          return 'stop';
        }
        // The upstream's own end follows `[DONE]`: left to arrive, so its connection goes back to the pool.
        if (rewriter.done) return 'done';
        if (overtime) {
          midStreamError = { code: 'upstream_timeout', message: `The reply took longer than a turn may last (${Math.round((turn.deadline - turn.started) / 1000)} s) and was cut short.` };
          return 'stop';
        }
        // Chunks after the first go to the socket itself: it is the one that drains.
        return written ? 'more' : drained(raw.socket ?? raw, turn.deadline);
      });
    } catch (error) {
      if (signal.aborted || !turn.output) throw error;
      const failure = classifyUpstreamError(error);
      midStreamError = { code: failure.code, message: `${failure.message} The stream was cut short.` };
    } finally {
      clearTimeout(deadline);
    }
    const usage = saneUsage(rewriter.usage, call);
    if (usage) turn.metered = { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens };
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
      turn.failure = { code: midStreamError.code, stage: 'stream' };
      body.destroy();
      // The one envelope mapper, as the one `data: {"error": …}` event the SDKs understand mid-stream.
      const envelope = envelopeFor(new AppError(midStreamError.code, midStreamError.message, { stage: 'stream' }), turn.traceId, performance.now() - turn.started);
      const failed = rewriter.fail(envelope.error);
      await exchange.finishing?.(turn);
      raw.end(failed);
      return;
    }
    const billed = usage ?? (call.includeUsage ? asUsage(await this.measure(turn, call)) : null);
    const end = rewriter.end(billed && withCost(billed, turn));
    const last = typeof end === 'string' ? end : await end;
    await exchange.finishing?.(turn);
    call.framing.replying?.();
    raw.end(last);
  }
}

/** `stream_options` that asks for the usage chunk and nothing else. */
function usageOnly(options: ChatBody['stream_options']): boolean {
  if (options?.include_usage !== true) return false;
  for (const field in options) if (field !== 'include_usage') return false;
  return true;
}

function streamHeaders(turn: Turn, timing: string): Record<string, string> {
  return {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-svc-request-id': turn.traceId,
    'x-request-id': turn.traceId,
    'server-timing': timing,
    ...(turn.rate ? rateLimitHeaders(turn.rate) : {}),
  };
}

/**
 * The body for an upstream with a `forwardFields` policy: without the fields it does not take. Only the
 * fields svc does not own are subject to it; they are taken out for this serialization and put back, as
 * the next deployment may take them.
 */
function forwardedJson(body: ChatBody, filter: FieldFilter): string {
  let held: [string, unknown][] | null = null;
  for (const field in body) {
    if (isOwnedField(field) || forwards(filter, field)) continue;
    (held ??= []).push([field, body[field]]);
    delete body[field];
  }
  const json = JSON.stringify(body);
  if (held) for (const [field, value] of held) body[field] = value;
  return json;
}

/** Token counts with a tokenizer, for when the upstream did not report usage; capped by the bounds. */
export async function estimateChatUsage(call: Pick<ChatCall, 'body' | 'produced' | 'rewriter' | 'promptBound' | 'outputBound'>): Promise<UpstreamUsage> {
  // One estimate, in the counting worker: the produced text first (within the estimate's bounded budget it
  // is the part to get right), then the prompt's.
  const produced = call.rewriter ? call.rewriter.producedText() : call.produced;
  const messages = call.body.messages;
  const [[completion, ...prompt]] = (await estimateTokens([[produced && produced.length > 0 ? produced.join('') : '', ...promptTexts(messages)]])) as [[number, ...number[]]];
  const p = Math.min(promptTokens(messages, prompt), call.promptBound);
  const c = Math.min(completion, call.outputBound);
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/**
 * The usage a stream ends with, with what svc billed for it (`usage.cost`, as `x-svc-cost` on a whole reply):
 * the cost of `turn.metered`, which the usage was made from, by the function that writes the ledger row.
 */
function withCost(usage: UpstreamUsage, turn: Turn): UpstreamUsage {
  const cost = costStamp(turn);
  if (cost !== null) usage.cost = cost;
  return usage;
}

function asUsage(metered: Metered): UpstreamUsage {
  return { prompt_tokens: metered.inputTokens, completion_tokens: metered.outputTokens, total_tokens: metered.inputTokens + metered.outputTokens };
}

/** Waits until the client takes more (the stream drains) or leaves; one that stops reading is let go at the turn's deadline. */
export function drained(stream: Writable, deadline: number): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => stream.destroy(), Math.max(0, deadline - performance.now()));
    const done = () => {
      clearTimeout(timer);
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
