/**
 * `POST /v1/messages` (the Anthropic Messages API: Claude Code, the Anthropic SDKs) over chat-completions
 * upstreams. Another surface of the metering pipeline, like the Responses API: the planner turns the request
 * into a chat request (`messages.validate.ts` reads its parts), validates it as chat, and hands it to the
 * chat executor with the Messages framing (`messages.framing.ts`). Pools, limits, refunds and the ledger are
 * the chat path's; the ledger's `model` is the svc model a `claude-…` name stands for (`compat.modelAliases`).
 *
 * As Anthropic: `max_tokens` is required, `temperature` is 0–1, tools with `stream: true` work (the upstream
 * is called without streaming and its reply replayed as events, as the spec wants tools). Unlike Anthropic,
 * a `max_tokens` above the model's cap is lowered to it (Claude Code asks for its own models' 32k–128k), and
 * `x-svc-max-tokens` says so: the rule of every text API (`output-cap.ts`, `gateway.maxTokens`). Fields that only shape Anthropic's own service (prompt caching, context
 * management, service tier, …) are accepted without effect and named in `x-svc-ignored`; what a chat model
 * would need and svc cannot do (server tools other than web search, MCP servers, code-execution containers)
 * is refused by name. The web search server tool (`web_search_2025…`, Claude Code's WebSearch) is run by
 * svc's own search (`hosted-search.ts`): each search a metered search turn, shown as Anthropic's
 * `server_tool_use` and `web_search_tool_result` blocks.
 *
 * `POST /v1/messages/count_tokens` counts the same request's prompt with svc's tokenizer (an estimate: the
 * upstream's own tokenizer may differ), without metering.
 */
import type { ServerResponse } from 'node:http';
import { AppError } from '../../errors/app-error.ts';
import type { HttpRequest, TurnPlan } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import type { Principal } from '../../authz/principal.ts';
import type { EntitlementCatalogue } from '../plan/entitlements.ts';
import type { ChatExecutor } from './chat.executor.ts';
import type { ChatSurface } from './chat.surface.ts';
import type { HostedSearch, HostedSearchTool } from './hosted-search.ts';
import { assertJsonDepth, isObject, type ChatMessage } from './chat.validate.ts';
import { MessagesFraming, messagesId } from './messages.framing.ts';
import { chatMessages, chatToolChoice, chatTools, invalid, systemText, thinkingOf } from './messages.validate.ts';
import { EXACT_CHARS, TokenEstimate, tokenizer } from './token-estimate.ts';

/** Fields this surface reads; every other one is accepted, has no effect, and is named in `x-svc-ignored`. */
const READ = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'metadata',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'container',
  'mcp_servers',
]);

/** A Messages request as a chat request, and what the reply and its headers need to know. */
interface Translated {
  chat: Record<string, unknown>;
  thinking: { note: string | null; show: boolean };
  stopSequences: string[];
  ignored: string[];
  /** The web search server tool, which svc runs (`hosted-search.ts`). */
  search: HostedSearchTool | null;
}

export class MessagesSurface {
  readonly #pipeline: MeteringPipeline;
  readonly #surface: ChatSurface;
  readonly #chat: ChatExecutor;
  readonly #entitlements: EntitlementCatalogue;
  readonly #search: HostedSearch;

  constructor(pipeline: MeteringPipeline, surface: ChatSurface, chat: ChatExecutor, entitlements: EntitlementCatalogue, search: HostedSearch) {
    this.#pipeline = pipeline;
    this.#surface = surface;
    this.#chat = chat;
    this.#entitlements = entitlements;
    this.#search = search;
  }

  /** Plans one `POST /v1/messages`; what was changed or ignored is said in headers on `response`. */
  plan(request: HttpRequest, principal: Principal, response: ServerResponse): TurnPlan<unknown, unknown> {
    // The upstream body is made from the chat request, not from these bytes: a long stream need not keep them.
    request.rawBody = undefined;
    const translated = this.#translate(request.body, true);
    if (translated.thinking.note !== null) response.setHeader('x-svc-thinking', translated.thinking.note);
    if (translated.ignored.length > 0) response.setHeader('x-svc-ignored', translated.ignored.join(', '));
    const body = asMessagesError(() => this.#surface.validate(translated.chat, 'emulate', response));
    if (this.#surface.routesElsewhere(body.model)) throw invalid('model', `The model ${body.model} answers through POST /v1/chat/completions only.`);
    const framing = new MessagesFraming({ id: messagesId('msg'), showThinking: translated.thinking.show, stopSequences: translated.stopSequences });
    // Serialised once: its size is the prompt bound, and the upstream body is these bytes with the model spliced in.
    const bytes = Buffer.from(JSON.stringify(body));
    const planned = this.#chat.plan(body, bytes.length, () => this.#pipeline.modelNotFound(principal, body.model), framing, { raw: bytes, sent: { ...body } });
    return translated.search ? this.#search.plan(planned, translated.search, framing, request.ip) : planned;
  }

  /** `POST /v1/messages/count_tokens`: the prompt's tokens (system, messages, tools) as svc's tokenizer counts them. */
  async countTokens(raw: unknown, principal: Principal): Promise<{ input_tokens: number }> {
    const { chat } = this.#translate(raw, false);
    const model = chat.model as string;
    const known = this.#surface.resolveModel(model).maxOutputTokens !== undefined;
    if (!known || this.#surface.routesElsewhere(model) || !this.#entitlements.allows(principal.payer.package, model)) throw this.#pipeline.modelNotFound(principal, model);
    const texts: string[] = [];
    for (const message of chat.messages as ChatMessage[]) {
      if (typeof message.content === 'string') texts.push(message.content);
      else if (Array.isArray(message.content)) for (const part of message.content as { text?: unknown }[]) if (typeof part.text === 'string') texts.push(part.text);
      if (message.tool_calls) texts.push(JSON.stringify(message.tool_calls));
    }
    if (chat.tools) texts.push(JSON.stringify(chat.tools));
    // As chat counts a prompt: 3 tokens for the reply's start, 4 per message.
    return { input_tokens: 3 + 4 * (chat.messages as unknown[]).length + (await countText(texts)) };
  }

  #translate(raw: unknown, metered: boolean): Translated {
    if (!isObject(raw)) throw new AppError('invalid_request', 'The request body must be a JSON object.');
    assertJsonDepth(raw);
    if (typeof raw.model !== 'string' || raw.model.length === 0) throw invalid('model', 'model is required: an svc model id, or a name that stands for one (such as claude-sonnet-4-5).');
    if (raw.container !== undefined && raw.container !== null) throw invalid('container', 'Code-execution containers are not supported: svc runs no server tools.');
    if (Array.isArray(raw.mcp_servers) && raw.mcp_servers.length > 0) throw invalid('mcp_servers', 'svc does not connect to MCP servers for you: run them in your client and pass their tools as tools.');
    const model = this.#surface.resolveModel(raw.model);
    const system = systemText(raw.system);
    const conversation = chatMessages(raw.messages);
    const chat: Record<string, unknown> = { model: model.id, messages: system === null ? conversation : [{ role: 'system', content: system }, ...conversation] };
    if (metered) {
      const asked = raw.max_tokens;
      if (typeof asked !== 'number' || !Number.isInteger(asked) || asked < 1) throw invalid('max_tokens', 'max_tokens is required: a positive integer.');
      chat.max_tokens = asked;
      if (raw.stream !== undefined && raw.stream !== null) chat.stream = raw.stream;
    }
    if (raw.temperature !== undefined && raw.temperature !== null) {
      if (typeof raw.temperature !== 'number' || raw.temperature < 0 || raw.temperature > 1) throw invalid('temperature', 'temperature must be a number from 0 to 1.');
      chat.temperature = raw.temperature;
    }
    if (raw.top_p !== undefined && raw.top_p !== null) chat.top_p = raw.top_p;
    if (raw.top_k !== undefined && raw.top_k !== null) {
      if (typeof raw.top_k !== 'number' || !Number.isInteger(raw.top_k) || raw.top_k < 0) throw invalid('top_k', 'top_k must be a non-negative integer.');
      chat.top_k = raw.top_k;
    }
    const stopSequences = stopSequencesOf(raw.stop_sequences);
    if (stopSequences.length > 0) chat.stop = stopSequences;
    const { tools, search } = chatTools(raw.tools, this.#search.enabled);
    if (tools !== undefined && tools.length > 0) Object.assign(chat, { tools }, chatToolChoice(raw.tool_choice));
    else if (raw.tool_choice !== undefined) chatToolChoice(raw.tool_choice);
    if (raw.metadata !== undefined && raw.metadata !== null && !isObject(raw.metadata)) throw invalid('metadata', 'metadata must be an object such as {user_id}.');
    const outputConfig = raw.output_config;
    if (outputConfig !== undefined && outputConfig !== null && !isObject(outputConfig)) throw invalid('output_config', 'output_config must be an object.');
    const format = outputConfig?.format;
    if (isObject(format)) {
      if (format.type !== 'json_schema' || !isObject(format.schema)) throw invalid('output_config.format', 'output_config.format must be {type: "json_schema", schema}.');
      chat.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
    }
    const thinking = thinkingOf(raw.thinking, outputConfig?.effort);
    Object.assign(chat, thinking.fields);
    const ignored: string[] = [];
    for (const field in raw) if (!READ.has(field) && raw[field] !== undefined && raw[field] !== null) ignored.push(field);
    return { chat, thinking, stopSequences, ignored, search };
  }
}

function stopSequencesOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string' && s.length > 0)) throw invalid('stop_sequences', 'stop_sequences must be an array of non-empty strings.');
  return value as string[];
}

/** A chat validation error, named as the Messages request names the field. */
function asMessagesError<T>(validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    if (!(error instanceof AppError) || !error.options.param) throw error;
    const param = error.options.param
      .replace(/^messages(\[\d+\])?.*$/, 'messages')
      .replace(/^stop$/, 'stop_sequences')
      .replace(/^tools\[(\d+)\]\.function\.parameters/, 'tools[$1].input_schema')
      .replace(/^tools\[(\d+)\]\.function\./, 'tools[$1].')
      .replace(/^(reasoning_effort|chat_template_kwargs).*$/, 'thinking');
    const message = error.message.replace(/\bstop must\b/, 'stop_sequences must');
    throw new AppError(error.code, message, { ...error.options, param });
  }
}

/**
 * Tokens of the texts by svc's tokenizer: the first `EXACT_CHARS` characters counted, the rest at the rate
 * measured on them (a whole Claude Code prompt would hold the event loop for a tenth of a second).
 */
async function countText(texts: string[]): Promise<number> {
  const estimate = new TokenEstimate(await tokenizer());
  let counted = 0;
  let chars = 0;
  let rest = 0;
  for (const text of texts) {
    const room = EXACT_CHARS - chars;
    if (room <= 0) rest += text.length;
    else {
      const head = text.length <= room ? text : text.slice(0, room);
      counted += estimate.count(head);
      chars += head.length;
      rest += text.length - head.length;
    }
  }
  return counted + (chars > 0 ? Math.ceil((rest * counted) / chars) : 0);
}
