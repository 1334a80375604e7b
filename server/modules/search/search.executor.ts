/**
 * The search executor: one `web_search` is one turn of `svc-2.1-search` (premium) on the metering
 * pipeline (DESIGN §8.3), whichever door it came through — the MCP tool (`POST /v1/mcp`), the REST tool
 * call (`POST /v1/mcp/tools/call`) or the chat model (`POST /v1/chat/completions`).
 *
 * Billing: input = the query's tokens; output = the tokens of the returned `svc.search.v1` JSON (compact,
 * as the REST result and the MCP text copy carry it), with `unit: {kind: 'search'}`. The worst case is
 * reserved before the provider is asked: every byte of the query a token, and an output budget of
 * `outputTokensPerResult` per result asked for. An answer larger than its budget sheds its page extracts
 * (`content`), then its lowest-ranked results, with a warning, so what is billed never exceeds what was
 * reserved. A provider failure is refunded in full (`debug.quotaRefunded`, stage `upstream`); an answer
 * from the short cache is billed like any other.
 */
import { randomBytes } from 'node:crypto';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { writeRawHead, type ClientSignal, type Exchange, type Executor, type TurnPlan } from '../../metering/executor.ts';
import { costStamp } from '../../metering/pricing.ts';
import { costHeaders, serverTiming, type Metered, type Turn } from '../../metering/turn.ts';
import type { ChatBody, ChatMessage } from '../gateway/chat.validate.ts';
import { estimateTokens } from '../gateway/token-count.ts';
import type { ModelRegistry, RoutedModel } from '../model/model.registry.ts';
import { rateLimitHeaders } from '../../rate-limit/rate-limit.service.ts';
import type { SvcSearchV1 } from './search.output.ts';
import { SearchProviderError } from './search.provider.ts';
import type { PreparedSearch, SearchService } from './search.service.ts';

export const searchModelId = 'svc-2.1-search';

/** Output tokens reserved per result asked for: a title, a snippet, the URL and fields, and room for an extract. */
export const outputTokensPerResult = 2048;
/** Output tokens reserved for the envelope of an answer: ids, the query, the direct answer, warnings. */
export const outputTokensBase = 1024;

/** How the answer is framed: returned (MCP), `{ok, name, result}` (REST tool call), or a chat completion. */
export type SearchFrame = { kind: 'return' } | { kind: 'tool'; name: string } | { kind: 'chat'; stream: boolean; includeUsage: boolean };

export interface SearchCall {
  model: RoutedModel;
  prepared: PreparedSearch;
  frame: SearchFrame;
  /** The output budget reserved, in tokens. */
  outputBudget: number;
  /** The answer as returned (compact JSON, fitted to the budget), once there is one: what `measure` counts. */
  json: string | null;
  /** Only results from these domains (or not from these), before the answer is fitted and billed. */
  domains: DomainFilter | null;
}

/** Domains a hosted search keeps or drops (a domain matches itself and its subdomains). */
export interface DomainFilter {
  allowed: readonly string[];
  blocked: readonly string[];
}

export class SearchExecutor implements Executor<SearchCall, SvcSearchV1> {
  readonly #search: SearchService;
  /** Null when the catalogue has no svc-2.1-search: hosted search is then off (every call a 404). */
  readonly #model: RoutedModel | null;

  constructor(registry: ModelRegistry, search: SearchService) {
    this.#search = search;
    this.#model = registry.get(searchModelId) ?? null;
  }

  get provider(): string {
    return this.#search.provider;
  }

  /** False when the catalogue has no svc-2.1-search, the model searches are billed as: hosted search is off. */
  get enabled(): boolean {
    return this.#model !== null;
  }

  /**
   * Plans one `web_search` from a tool's arguments (`{query, maxResults?}`). Throws 400 `invalid_request`
   * naming the field (`param` is `<prefix>query` or `<prefix>maxResults`).
   */
  planFromArguments(args: unknown, frame: SearchFrame, paramPrefix = ''): TurnPlan<SearchCall, SvcSearchV1> {
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw new AppError('invalid_request', `${paramPrefix ? paramPrefix.slice(0, -1) : 'arguments'} must be an object: {"query": "…", "maxResults": 5}.`, {
        param: paramPrefix ? paramPrefix.slice(0, -1) : 'arguments',
      });
    }
    const { query, maxResults, ...rest } = args as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0) {
      throw new AppError('invalid_request', `${paramPrefix}${unknown[0]} is not an argument of web_search; it takes query and maxResults.`, { param: `${paramPrefix}${unknown[0]}` });
    }
    return this.#plan(this.#prepare(query, maxResults, paramPrefix), frame);
  }

  /** Plans `svc-2.1-search` through chat completions: the last user message is the query. */
  planFromChat(body: ChatBody): TurnPlan<SearchCall, SvcSearchV1> {
    const { text, param } = lastUserText(body.messages);
    const prepared = this.#prepare(text, undefined, '', param);
    const stream = body.stream === true;
    return this.#plan(prepared, { kind: 'chat', stream, includeUsage: stream && body.stream_options?.include_usage === true });
  }

  /**
   * Plans a search a model asked for inside a chat turn (the hosted `web_search` of the Responses and Messages
   * APIs): the answer is returned, and only results `domains` lets through are kept and billed.
   */
  planHosted(query: unknown, domains: DomainFilter | null): TurnPlan<SearchCall, SvcSearchV1> {
    const planned = this.#plan(this.#prepare(query, undefined, ''), { kind: 'return' });
    planned.call.domains = domains;
    return planned;
  }

  #prepare(query: unknown, maxResults: unknown, paramPrefix: string, queryParam?: string): PreparedSearch {
    try {
      return this.#search.prepare(query, maxResults);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const field = error.options.param;
      const param = field === 'query' && queryParam ? queryParam : `${paramPrefix}${field}`;
      const message =
        queryParam && field === 'query'
          ? { en: error.message.replace(/^query/, 'The search query (the last user message)'), zh: error.messageZh.replace(/^query/, '搜索查询（最后一条用户消息）') }
          : { en: `${paramPrefix}${error.message}`, zh: `${paramPrefix}${error.messageZh}` };
      throw new AppError('invalid_request', message, { param });
    }
  }

  #plan(prepared: PreparedSearch, frame: SearchFrame): TurnPlan<SearchCall, SvcSearchV1> {
    if (!this.#model) {
      const message = bilingual(
        'Hosted search is off on this server: its model catalogue has no {model}, the model searches are billed as.',
        '本服务器未开启托管搜索：模型目录中没有用于计费的 {model}。',
        { model: searchModelId },
      );
      throw new AppError('model_not_found', message, { param: 'model' });
    }
    const outputBudget = outputTokensBase + prepared.maxResults * outputTokensPerResult;
    return {
      executor: this,
      product: 'search',
      model: this.#model,
      stream: false,
      // A token is at least one byte.
      worstCase: { inputTokens: Buffer.byteLength(prepared.query), outputTokens: outputBudget },
      call: { model: this.#model, prepared, frame, outputBudget, json: null, domains: null },
    };
  }

  async execute(turn: Turn, call: SearchCall, exchange: Exchange): Promise<SvcSearchV1> {
    const aborting = abortSignalOf(exchange.signal);
    let result: SvcSearchV1;
    try {
      ({ result } = await this.#search.search(call.prepared.query, { maxResults: call.prepared.maxResults, signal: aborting.signal }));
    } catch (error) {
      if (exchange.signal.aborted) throw error;
      if (error instanceof SearchProviderError) {
        turn.upstreamStatus = error.upstreamStatus;
        throw new AppError(error.code, `${error.message} Your quota for this search was refunded.`, {
          stage: 'upstream',
          cause: error,
          debug: { productModel: call.model.id, upstreamStatus: error.upstreamStatus, upstreamHost: error.provider, quotaRefunded: true },
        });
      }
      throw error;
    } finally {
      aborting.dispose();
    }
    const upstreamMs = performance.now() - turn.upstreamFrom;
    turn.deployment = this.#search.provider;
    if (call.domains) result.results = result.results.filter((item) => domainAllowed(item.domain, call.domains!));
    call.json = await fitToBudget(result, call.outputBudget, countOne);
    const reply = exchange.reply;
    if (reply === null || call.frame.kind !== 'chat') {
      // Counting the answer's tokens takes milliseconds: the tool frames leave it to settlement (`measure`),
      // off the response path. The chat frame needs them now, for `usage`. Either way the counting worker
      // counts them, not the event loop.
      turn.output = true;
      if (reply !== null && call.frame.kind === 'tool') {
        reply.headers(replyHeaders(turn, upstreamMs)).type('application/json').send(`{"ok":true,"name":${JSON.stringify(call.frame.name)},"result":${call.json}}`);
      }
      return result;
    }
    const { inputTokens, outputTokens } = (turn.metered = await this.measure(turn, call));
    const json = call.json;
    const headers = replyHeaders(turn, upstreamMs);
    turn.output = true;
    // Everything below writes the reply at once.
    await exchange.finishing?.(turn);
    const usage = { prompt_tokens: inputTokens, completion_tokens: outputTokens, total_tokens: inputTokens + outputTokens };
    const id = `chatcmpl-${randomBytes(12).toString('base64url')}`;
    const created = Math.floor(Date.now() / 1000);
    const model = call.model.resolvedId;
    const annotations = urlCitations(json, result);
    if (!call.frame.stream) {
      const message = { role: 'assistant', content: json, refusal: null, annotations };
      reply
        .headers(headers)
        .type('application/json')
        .send(JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, logprobs: null, finish_reason: 'stop' }], usage }));
      return result;
    }
    // One content chunk (with the citations), then the finish, the usage chunk if asked for, and [DONE].
    const includeUsage = call.frame.includeUsage;
    const chunk = (choices: unknown[], extra: Record<string, unknown> = includeUsage ? { usage: null } : {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
    let text = chunk([{ index: 0, delta: { role: 'assistant', content: json, annotations }, logprobs: null, finish_reason: null }]);
    text += chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
    // A stream's usage chunk says what svc billed, as `x-svc-cost` does on a whole reply.
    if (includeUsage) text += chunk([], { usage: { ...usage, cost: costStamp(turn) } });
    text += 'data: [DONE]\n\n';
    const ids = { 'x-svc-request-id': turn.traceId, 'x-request-id': turn.traceId };
    writeRawHead(reply, 200, { ...ids, ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    reply.raw.end(text);
    return result;
  }

  /** Input = the query's tokens; output = the returned JSON's tokens (nothing when there was no answer). */
  async measure(turn: Turn, call: SearchCall): Promise<Metered> {
    if (call.json === null) return { inputTokens: 0, outputTokens: 0 };
    const [query, answer] = await estimateTokens([[call.prepared.query], [call.json]]);
    return {
      inputTokens: Math.min(query![0]!, turn.worstCase.inputTokens),
      outputTokens: Math.min(answer![0]!, call.outputBudget),
      unit: { kind: 'search', quantity: 1 },
    };
  }
}

/**
 * The reply's own headers. Not the request ids: the surface put them on the reply already (Fastify's hook, the
 * chat lane's reply), and the lane keeps a name given twice twice. A stream's head adds them (`writeRawHead`
 * on a Fastify reply writes only the headers it is given).
 */
function replyHeaders(turn: Turn, upstreamMs: number): Record<string, string> {
  return {
    'server-timing': serverTiming(turn, upstreamMs),
    ...(turn.rate ? rateLimitHeaders(turn.rate) : {}),
    ...costHeaders(turn),
  };
}

/**
 * The answer's compact JSON, within `budget` tokens: past it, the page extracts go first, then results
 * from the lowest rank, each step with a warning. Mutates `result` to what is returned.
 */
export async function fitToBudget(result: SvcSearchV1, budget: number, count: (text: string) => Promise<number>): Promise<string> {
  let json = JSON.stringify(result);
  // Bytes bound tokens from above: most answers need no counting to know they fit.
  let tokens = Buffer.byteLength(json) <= budget ? null : await count(json);
  if (tokens !== null && tokens > budget && result.results.some((item) => item.content !== undefined)) {
    for (const item of result.results) delete item.content;
    result.warnings.push(`Page extracts were left out to keep this answer within ${budget} tokens.`);
    json = JSON.stringify(result);
    tokens = await count(json);
  }
  let dropped = 0;
  while (tokens !== null && tokens > budget && result.results.length > 0) {
    result.results.pop();
    dropped++;
    json = JSON.stringify({ ...result, warnings: [...result.warnings, droppedWarning(dropped, budget)] });
    tokens = await count(json);
  }
  if (dropped > 0) {
    result.warnings.push(droppedWarning(dropped, budget));
    json = JSON.stringify(result);
  }
  return json;
}

/** Whether a result's domain passes the filter: listed (or a subdomain of one listed) when `allowed` is set, never when blocked. */
export function domainAllowed(domain: string, filter: DomainFilter): boolean {
  const matches = (listed: string) => domain === listed || domain.endsWith(`.${listed}`);
  if (filter.allowed.length > 0 && !filter.allowed.some(matches)) return false;
  return !filter.blocked.some(matches);
}

/** One text's tokens, counted as settlement counts it (its own estimate), in the counting worker. */
async function countOne(text: string): Promise<number> {
  return (await estimateTokens([[text]]))[0]![0]!;
}

function droppedWarning(dropped: number, budget: number): string {
  return `${dropped} lower-ranked ${dropped === 1 ? 'result was' : 'results were'} left out to keep this answer within ${budget} tokens.`;
}

/**
 * OpenAI-style `url_citation` annotations, one per result, each pointing at the result's URL inside the
 * reply's content (the JSON text), so SDK users get sources with positions that hold.
 */
export function urlCitations(json: string, result: SvcSearchV1): { type: 'url_citation'; url_citation: { url: string; title: string; start_index: number; end_index: number } }[] {
  let from = 0;
  return result.results.map((item) => {
    const needle = `"url":${JSON.stringify(item.url)}`;
    const at = json.indexOf(needle, from);
    const start = at < 0 ? 0 : at + '"url":"'.length;
    const end = at < 0 ? 0 : at + needle.length - 1;
    if (at >= 0) from = at + needle.length;
    return { type: 'url_citation', url_citation: { url: item.url, title: item.title, start_index: start, end_index: end } };
  });
}

/** The text of the last user message (its text parts only) and where it is, for errors. */
function lastUserText(messages: readonly ChatMessage[]): { text: unknown; param: string } {
  let index = messages.length - 1;
  while (index >= 0 && messages[index]!.role !== 'user') index--;
  if (index < 0) throw new AppError('invalid_request', `${searchModelId} needs a user message: its text is the search query.`, { param: 'messages' });
  const content = messages[index]!.content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? (content as { type?: string; text?: string }[])
            .filter((part) => part?.type === 'text' && typeof part.text === 'string')
            .map((part) => part.text)
            .join(' ')
        : content;
  return { text, param: `messages[${index}].content` };
}

/** The pipeline's client signal as an AbortSignal for the provider call; `dispose` unhooks it. */
function abortSignalOf(signal: ClientSignal): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort(new Error('The client went away.'));
  if (signal.aborted) abort();
  else signal.once('abort', abort);
  return { signal: controller.signal, dispose: () => signal.off('abort', abort) };
}
