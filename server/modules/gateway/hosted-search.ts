/**
 * Hosted web search inside a model turn: the Responses API's `web_search` tool (Codex sends it by default)
 * and the Anthropic server tool `web_search_2025…` (Claude Code's WebSearch). Both surfaces use this one
 * step; only how the searches are shown differs (their framings read `searches`).
 *
 * The model is offered a function `web_search {query}`. The turn's first model call is the turn the client's
 * request admitted; when the model asks for searches, svc runs each as its own metered turn of
 * `svc-2.1-search` on the same payer (the search executor, through the pipeline's `run`: reserved, settled,
 * refunded if the provider fails, a ledger row each), feeds the results back as tool messages (the
 * `svc.search.v1` JSON that was billed), and asks the model again — each further model call its own chat
 * turn, so every call is reserved before it runs and billed for what it used. The loop ends when the model
 * answers without searching: the reply is that answer, with the searches before it and its usage the sum of
 * every model call.
 *
 * Bounded: at most `maxSearchesPerTurn` (3) searches a request, fewer when the client says so (`max_uses`);
 * past it the model is told the limit and asked once more without the tool. A search that fails (the provider,
 * the payer's quota) is told to the model, which answers without it; the reply shows the failed search.
 * Client tool calls the model makes in the same breath as a search are not returned: the model is asked again
 * with the results and calls them again if it still needs them.
 */
import { AppError } from '../../errors/app-error.ts';
import { newRequestId } from '../../infra/request-id.ts';
import type { Exchange, Executor, TurnPlan } from '../../metering/executor.ts';
import type { MeteringPipeline, TurnOrigin } from '../../metering/pipeline.ts';
import type { Metered, Turn } from '../../metering/turn.ts';
import type { DomainFilter, SearchExecutor } from '../search/search.executor.ts';
import type { SvcSearchV1 } from '../search/search.output.ts';
import type { ChatCall, ChatExecutor } from './chat.executor.ts';
import type { ChatBody, ChatMessage } from './chat.validate.ts';
import { chatFraming, type ChatCompletion, type ReplyFraming, type ToolCall } from './framing.ts';

/** The function the model calls to search. */
export const hostedSearchFunction = 'web_search';

/** Searches one request may make, whatever the client allows. */
export const maxSearchesPerTurn = 3;

/** A hosted search tool as a surface read it from the client's request. */
export interface HostedSearchTool {
  /** Searches this request may make: the client's `max_uses`, at most `maxSearchesPerTurn`. */
  maxUses: number;
  domains: DomainFilter | null;
}

/** One search the model made, for the reply. */
export interface SearchRound {
  /** The id of the model's tool call. */
  callId: string;
  /** The query as searched (or as the model sent it, when it was refused). */
  query: string;
  /** The answer; null when the search failed (`error` says why). */
  result: SvcSearchV1 | null;
  error: string | null;
}

/** A framing that shows the searches made before the reply: set before it frames. */
export interface SearchingFraming extends ReplyFraming {
  searches: SearchRound[];
}

/** The chat function tool the model sees. */
export function hostedSearchChatTool(): { type: 'function'; function: Record<string, unknown> } {
  return {
    type: 'function',
    function: {
      name: hostedSearchFunction,
      description:
        'Search the web. Returns svc.search.v1 JSON: ranked results with title, url and snippet. Search when the answer needs current or outside information; cite the URLs of the results you use in your answer.',
      parameters: { type: 'object', properties: { query: { type: 'string', description: 'What to search for, as you would type it into a search engine.' } }, required: ['query'] },
    },
  };
}

export interface SearchingCall {
  chat: ChatCall;
  tool: HostedSearchTool;
  framing: SearchingFraming;
  /** Where the request came from: the searches and later model calls are turns of their own. */
  ip: string;
}

export class HostedSearch implements Executor<SearchingCall> {
  readonly #pipeline: MeteringPipeline;
  readonly #chat: ChatExecutor;
  readonly #search: SearchExecutor;
  /** A follow-up model call: the completion is returned to the loop, not answered. */
  readonly #completer: Executor<ChatCall, ChatCompletion>;

  constructor(pipeline: MeteringPipeline, chat: ChatExecutor, search: SearchExecutor) {
    this.#pipeline = pipeline;
    this.#chat = chat;
    this.#search = search;
    this.#completer = {
      execute: (turn, call, exchange) => chat.complete(turn, call, exchange),
      measure: (turn, call) => chat.measure(turn, call),
      describeWorstCase: (call) => chat.describeWorstCase(call),
    };
  }

  /** False when this server has no search model: a hosted search tool is then refused. */
  get enabled(): boolean {
    return this.#search.enabled;
  }

  /** The plan of a chat turn (its body offers `hostedSearchChatTool`) whose model may search. */
  plan(planned: TurnPlan<ChatCall>, tool: HostedSearchTool, framing: SearchingFraming, ip: string): TurnPlan<SearchingCall> {
    // Searches happen before anything is answered: a stream is the finished reply replayed.
    planned.call.replayed = planned.stream;
    return { ...planned, executor: this, call: { chat: planned.call, tool, framing, ip } };
  }

  async execute(turn: Turn, call: SearchingCall, exchange: Exchange): Promise<void> {
    const first = await this.#chat.complete(turn, call.chat, exchange);
    const { completion, searches } = await this.#converse(turn, call, exchange, first);
    call.framing.searches = searches;
    await this.#chat.answer(turn, call.chat, exchange, completion, performance.now() - turn.upstreamFrom);
  }

  measure(turn: Turn, call: SearchingCall): Promise<Metered> {
    return this.#chat.measure(turn, call.chat);
  }

  progress(turn: Turn, call: SearchingCall): Metered {
    return this.#chat.progress(turn, call.chat);
  }

  describeWorstCase(call: SearchingCall) {
    return this.#chat.describeWorstCase(call.chat);
  }

  /** Runs the searches the model asks for and asks it again, until it answers; usage summed over the calls. */
  async #converse(turn: Turn, call: SearchingCall, exchange: Exchange, first: ChatCompletion): Promise<{ completion: ChatCompletion; searches: SearchRound[] }> {
    const searches: SearchRound[] = [];
    const messages = [...call.chat.body.messages];
    const usage = { ...first.usage };
    let completion = first;
    let offered = true;
    for (;;) {
      const message = completion.choices[0]?.message;
      const asked = (message?.tool_calls ?? []).filter((toolCall) => toolCall.function.name === hostedSearchFunction);
      if (asked.length === 0) break;
      if (!offered) {
        // Asked without the tool on offer: the searches are not run, and the rest of the reply stands.
        message!.tool_calls = message!.tool_calls!.filter((toolCall) => toolCall.function.name !== hostedSearchFunction);
        if (message!.tool_calls.length === 0) {
          delete message!.tool_calls;
          completion.choices[0]!.finish_reason = 'stop';
        }
        break;
      }
      messages.push({ role: 'assistant', content: message!.content ?? null, tool_calls: asked });
      for (const asking of asked) messages.push(await this.#answerSearch(turn, call, exchange, asking, searches));
      offered = searches.length < call.tool.maxUses;
      completion = await this.#ask(turn, call, exchange, messages, offered);
      usage.prompt_tokens += completion.usage.prompt_tokens;
      usage.completion_tokens += completion.usage.completion_tokens;
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    }
    completion.usage = usage;
    return { completion, searches };
  }

  /** One search the model asked for, run (or refused past the limit), as the tool message that answers it. */
  async #answerSearch(turn: Turn, call: SearchingCall, exchange: Exchange, asking: ToolCall, searches: SearchRound[]): Promise<ChatMessage> {
    const answer = (content: string): ChatMessage => ({ role: 'tool', tool_call_id: asking.id, content });
    if (searches.length >= call.tool.maxUses) {
      return answer(`Not searched: at most ${call.tool.maxUses} searches per request. Answer with the results you have.`);
    }
    const query = queryOf(asking.function.arguments);
    const round: SearchRound = { callId: asking.id, query: typeof query === 'string' ? query : '', result: null, error: null };
    searches.push(round);
    try {
      const planned = this.#search.planHosted(query, call.tool.domains);
      round.result = await this.#pipeline.run(turn.principal, planned, this.#origin(turn, call), exchange.signal);
      round.query = round.result.query;
      // The answer as returned is what the search turn billed (fitted to its reservation).
      return answer(JSON.stringify(round.result));
    } catch (error) {
      if (exchange.signal.aborted || !(error instanceof AppError)) throw error;
      round.error = error.message;
      return answer(`The search failed: ${error.message}`);
    }
  }

  /** The model asked again, as a chat turn of its own; without the search tool once the limit is reached. */
  #ask(turn: Turn, call: SearchingCall, exchange: Exchange, messages: ChatMessage[], offered: boolean): Promise<ChatCompletion> {
    const first = call.chat;
    const body: ChatBody = { ...first.body, model: first.model.id, messages: [...messages], stream: false };
    // A choice that forced a search (or any tool) was met by the search.
    if (forcesSearch(body.tool_choice)) body.tool_choice = 'auto';
    if (!offered) withoutSearchTool(body);
    const planned = this.#chat.plan(body, null, () => new AppError('model_not_found', undefined, { param: 'model' }), chatFraming);
    return this.#pipeline.run(turn.principal, { ...planned, executor: this.#completer }, this.#origin(turn, call), exchange.signal);
  }

  /** A fresh turn id for each search and model call, traced to the client's request id when it sent one. */
  #origin(turn: Turn, call: SearchingCall): TurnOrigin {
    return { ip: call.ip, traceId: newRequestId(), clientRequestId: turn.clientRequestId };
  }
}

/** The `query` of a `web_search` call's arguments, as the model sent it (checked by the search itself). */
function queryOf(args: string): unknown {
  try {
    const parsed = JSON.parse(args) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as { query?: unknown }).query : undefined;
  } catch {
    return undefined;
  }
}

function forcesSearch(choice: unknown): boolean {
  if (choice === 'required') return true;
  return typeof choice === 'object' && choice !== null && (choice as { function?: { name?: unknown } }).function?.name === hostedSearchFunction;
}

/** The body without the search tool (and without tools at all when none is left). */
function withoutSearchTool(body: ChatBody): void {
  const tools = (body.tools ?? []).filter((tool) => (tool as { function?: { name?: unknown } }).function?.name !== hostedSearchFunction);
  if (tools.length > 0) {
    body.tools = tools;
    return;
  }
  delete body.tools;
  delete body.tool_choice;
  delete body.parallel_tool_calls;
}

/** Domains as the search compares them: lower case, no scheme, path or leading `www.`. */
export function domainList(value: unknown, at: string): string[] {
  if (!Array.isArray(value) || !value.every((domain) => typeof domain === 'string' && domain.length > 0 && domain.length <= 253)) {
    throw new AppError('invalid_request', `${at.split('.').at(-1)} must be an array of domain names such as "example.com".`, { param: at });
  }
  return (value as string[]).map((domain) =>
    domain
      .toLowerCase()
      .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
      .replace(/[/?#].*$/, '')
      .replace(/^www\./, ''),
  );
}

/** A result the reply cites, and where: each place its URL appears in the text. */
export interface Citation {
  start: number;
  end: number;
  result: SvcSearchV1['results'][number];
}

/**
 * The places a reply cites the searches' results: every occurrence of a result's URL in the text (a bare
 * link or a Markdown one), the longest URL winning where two overlap, in order.
 */
export function citationsIn(text: string, searches: readonly SearchRound[]): Citation[] {
  const results = new Map<string, SvcSearchV1['results'][number]>();
  for (const round of searches) for (const result of round.result?.results ?? []) if (!results.has(result.url)) results.set(result.url, result);
  const found: Citation[] = [];
  for (const [url, result] of results) {
    for (let at = text.indexOf(url); at !== -1; at = text.indexOf(url, at + url.length)) found.push({ start: at, end: at + url.length, result });
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const cited: Citation[] = [];
  for (const citation of found) if (cited.length === 0 || citation.start >= cited.at(-1)!.end) cited.push(citation);
  return cited;
}
