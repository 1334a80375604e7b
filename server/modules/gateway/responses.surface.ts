/**
 * `POST /v1/responses` (the OpenAI Responses API, CONFORMANCE "Responses API") over chat-completions
 * upstreams. Another surface of the metering pipeline, not another pipeline: the planner turns a
 * Responses request into a chat request — input items and `instructions` into messages (`responses.input.ts`),
 * tools into function tools (`responses.tools.ts`), `max_output_tokens`, `text.format`, `reasoning.effort`,
 * the conversation of `previous_response_id` and the items of `item_reference` — validates it as chat, and
 * hands it to the chat executor with the Responses framing (`responses.framing.ts`). Billing, refunds and
 * errors are the chat path's. A request with the hosted `web_search` tool runs through `hosted-search.ts`:
 * svc runs the searches the model asks for, each a metered search turn.
 *
 * Tools with `stream: true` are always answered by a non-streaming upstream call replayed as events.
 * Fields this API has that a chat upstream cannot honour are refused by name (`background`, hosted tools svc
 * cannot run, `conversation`, `prompt`) or ignored when they only shape OpenAI's own service (`include`,
 * `truncation`, `stream_options`, prompt caching, `service_tier`, Codex's `client_metadata`); any other field
 * is forwarded like an unknown chat field. A field sent as `null` (and a free-text one as `""`) is one not sent
 * (`absent-fields.ts`).
 *
 * Kept responses (`store` not false) are read back with `GET /v1/responses/{id}`, listed with
 * `GET /v1/responses/{id}/input_items` and forgotten with `DELETE /v1/responses/{id}`, by the payer only.
 */
import type { ServerResponse } from 'node:http';
import { AppError } from '../../errors/app-error.ts';
import type { HttpRequest, TurnPlan } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import type { Principal } from '../../authz/principal.ts';
import { dropAbsentFields, responsesEmptyAsAbsent } from './absent-fields.ts';
import type { ChatExecutor } from './chat.executor.ts';
import type { ChatSurface } from './chat.surface.ts';
import { assertJsonDepth, type ChatBody } from './chat.validate.ts';
import type { HostedSearch } from './hosted-search.ts';
import { responsesId, ResponsesFraming, type ResponseEcho } from './responses.framing.ts';
import { inputItemList, inputMessages, referencedItems, toolSources } from './responses.input.ts';
import type { ResponseStore } from './responses.store.ts';
import { chatToolChoice, planTools } from './responses.tools.ts';

/** Fields of a Responses request that are read here; every other field is forwarded to the chat upstream. */
const READ = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_output_tokens',
  'temperature',
  'top_p',
  'stream',
  'store',
  'metadata',
  'previous_response_id',
  'text',
  'reasoning',
  'user',
  'include',
  'truncation',
  'stream_options',
  'background',
  'conversation',
  'prompt',
  'top_logprobs',
  'max_tool_calls',
  'prompt_cache_key',
  'prompt_cache_retention',
  'safety_identifier',
  'service_tier',
  'client_metadata',
]);

/** Ids svc gives responses (and accepts back): letters, digits, `_` and `-`. */
const RESPONSE_ID = /^[A-Za-z0-9_-]{1,128}$/;

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export class ResponsesSurface {
  readonly #pipeline: MeteringPipeline;
  readonly #surface: ChatSurface;
  readonly #chat: ChatExecutor;
  readonly #store: ResponseStore;
  readonly #search: HostedSearch;

  constructor(pipeline: MeteringPipeline, surface: ChatSurface, chat: ChatExecutor, store: ResponseStore, search: HostedSearch) {
    this.#pipeline = pipeline;
    this.#surface = surface;
    this.#chat = chat;
    this.#store = store;
    this.#search = search;
  }

  async plan(request: HttpRequest, principal: Principal, response: ServerResponse): Promise<TurnPlan<unknown, unknown>> {
    // The upstream body is made from the chat request, not from these bytes: a long stream need not keep them.
    request.rawBody = undefined;
    const raw = request.body;
    if (!isObject(raw)) throw new AppError('invalid_request', 'The request body must be a JSON object.');
    dropAbsentFields(raw, responsesEmptyAsAbsent);
    assertJsonDepth(raw);
    refuseUnsupported(raw);
    const previousId = optionalString(raw, 'previous_response_id');
    if (previousId !== null && !RESPONSE_ID.test(previousId)) throw invalid('previous_response_id', 'previous_response_id must be the id of a response (resp_…).');
    const references = referencedItems(raw.input);
    const keep = raw.store !== false;
    const loaded = await this.#store.load(principal.payer.id, previousId, references).catch((error: unknown) => {
      throw new AppError('service_unavailable', 'Stored responses are unavailable (Redis unreachable); send the whole conversation, or retry shortly.', { cause: error });
    });
    if (loaded.previous === undefined) {
      throw invalid(
        'previous_response_id',
        `Previous response with id ${JSON.stringify(previousId)} not found: responses are kept for ${this.#store.retentionSeconds} s, for the key's payer, and only when store was not false.`,
      );
    }
    const tools = planTools([{ at: 'tools', tools: raw.tools }, ...toolSources(raw.input)], this.#search.enabled);
    const conversation = [...(loaded.previous ?? []), ...inputMessages(raw.input, loaded.items)];
    const instructions = optionalString(raw, 'instructions');
    const chat: Record<string, unknown> = {};
    for (const field in raw) if (!READ.has(field)) chat[field] = raw[field];
    chat.model = raw.model;
    chat.messages = instructions === null ? conversation : [{ role: 'system', content: instructions }, ...conversation];
    if (raw.stream !== undefined) chat.stream = raw.stream;
    if (raw.temperature !== undefined) chat.temperature = raw.temperature;
    if (raw.top_p !== undefined) chat.top_p = raw.top_p;
    if (raw.max_output_tokens !== undefined) chat.max_tokens = raw.max_output_tokens;
    if (raw.user !== undefined) chat.user = raw.user;
    if (raw.parallel_tool_calls !== undefined) chat.parallel_tool_calls = raw.parallel_tool_calls;
    if (tools.chat.length > 0) chat.tools = tools.chat;
    if (raw.tool_choice !== undefined) {
      const choice = chatToolChoice(raw.tool_choice, tools);
      if (tools.chat.length > 0) chat.tool_choice = choice;
    }
    Object.assign(chat, textFormat(raw.text), reasoningEffort(raw.reasoning));
    const body = asResponsesError(() => this.#surface.validate(chat, 'emulate', response));
    if (this.#surface.routesElsewhere(body.model)) {
      throw invalid('model', `The model ${body.model} answers through POST /v1/chat/completions only.`);
    }
    const metadata = raw.metadata;
    if (metadata !== undefined && !isObject(metadata)) throw invalid('metadata', 'metadata must be an object.');
    const framing = new ResponsesFraming({
      id: responsesId('resp'),
      createdAt: Math.floor(Date.now() / 1000),
      echo: echoOf(raw, body, instructions, previousId, keep),
      store: keep && this.#store.enabled ? this.#store : null,
      payerId: principal.payer.id,
      conversation,
      input: keep ? inputItemList(raw.input) : [],
      names: tools.names,
    });
    // Serialised once: its size is the prompt bound, and the upstream body is these bytes with the model spliced in.
    const bytes = Buffer.from(JSON.stringify(body));
    const planned = this.#chat.plan(body, bytes.length, () => this.#pipeline.modelNotFound(principal, body.model), framing, { raw: bytes, sent: { ...body } });
    return tools.search ? this.#search.plan(planned, tools.search, framing, request.ip) : planned;
  }

  /** `GET /v1/responses/{id}`: the response as it was sent. */
  async retrieve(principal: Principal, id: string, query: unknown): Promise<string> {
    if (isObject(query) && (query.stream === 'true' || query.stream === true)) {
      throw invalid('stream', 'Streaming a stored response again is not supported: svc has no background responses, so every response is complete once stored.');
    }
    const json = RESPONSE_ID.test(id) ? await this.#read(() => this.#store.response(principal.payer.id, id)) : null;
    if (json === null) throw this.#notFound(id);
    return json;
  }

  /** `DELETE /v1/responses/{id}`. */
  async delete(principal: Principal, id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    const deleted = RESPONSE_ID.test(id) && (await this.#read(() => this.#store.delete(principal.payer.id, id)));
    if (!deleted) throw this.#notFound(id);
    return { id, object: 'response', deleted: true };
  }

  /** `GET /v1/responses/{id}/input_items`: a page of the input items (`limit`, `order`, `after`). */
  async inputItems(principal: Principal, id: string, query: unknown): Promise<InputItemPage> {
    const page = pageOf(query);
    const items = RESPONSE_ID.test(id) ? await this.#read(() => this.#store.inputItems(principal.payer.id, id)) : null;
    if (items === null) throw this.#notFound(id);
    return paginate(items, page);
  }

  #read<T>(read: () => Promise<T>): Promise<T> {
    return read().catch((error: unknown) => {
      throw new AppError('service_unavailable', 'Stored responses are unavailable (Redis unreachable); retry shortly.', { cause: error });
    });
  }

  #notFound(id: string): AppError {
    return new AppError(
      'not_found',
      `No response with id ${JSON.stringify(id)}: responses are kept for ${this.#store.retentionSeconds} s after they are made, only when store was not false, and only for the key's payer.`,
      { param: 'response_id' },
    );
  }
}

export interface InputItemPage {
  object: 'list';
  data: Record<string, unknown>[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

interface PageQuery {
  limit: number;
  order: 'asc' | 'desc';
  after: string | null;
}

/** `limit` (1–100, default 20), `order` (`asc` or `desc`, the default, as OpenAI's) and `after` (an item id). */
function pageOf(query: unknown): PageQuery {
  const q = isObject(query) ? query : {};
  const limit = q.limit === undefined || q.limit === '' ? 20 : Number(q.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalid('limit', 'limit must be a whole number from 1 to 100.');
  const order = q.order === undefined || q.order === '' ? 'desc' : q.order;
  if (order !== 'asc' && order !== 'desc') throw invalid('order', 'order must be asc or desc.');
  const after = typeof q.after === 'string' && q.after.length > 0 ? q.after : null;
  return { limit, order, after };
}

function paginate(items: Record<string, unknown>[], { limit, order, after }: PageQuery): InputItemPage {
  const ordered = order === 'asc' ? items : [...items].reverse();
  let from = 0;
  if (after !== null) {
    const at = ordered.findIndex((item) => item.id === after);
    if (at === -1) throw invalid('after', `after names ${JSON.stringify(after)}, which is not an input item of this response.`);
    from = at + 1;
  }
  const data = ordered.slice(from, from + limit);
  return { object: 'list', data, first_id: (data[0]?.id as string | undefined) ?? null, last_id: (data.at(-1)?.id as string | undefined) ?? null, has_more: from + limit < ordered.length };
}

function optionalString(raw: Record<string, unknown>, field: string): string | null {
  const value = raw[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0) throw invalid(field, `${field} must be a non-empty string.`);
  return value;
}

function refuseUnsupported(raw: Record<string, unknown>): void {
  if (raw.background === true) throw invalid('background', 'Background responses are not supported: send the request without background and wait for (or stream) the reply.');
  if (raw.conversation !== undefined && raw.conversation !== null) throw invalid('conversation', 'Conversations are not supported: chain requests with previous_response_id.');
  if (raw.prompt !== undefined && raw.prompt !== null) throw invalid('prompt', 'Stored prompt templates are not supported: send instructions and input.');
  if (raw.input === undefined || raw.input === null) throw invalid('input', 'input is required: a string, or an array of input items.');
  if (raw.stream !== undefined && raw.stream !== null && typeof raw.stream !== 'boolean') throw invalid('stream', 'stream must be a boolean.');
  if (raw.store !== undefined && raw.store !== null && typeof raw.store !== 'boolean') throw invalid('store', 'store must be a boolean.');
}

/** `text.format` as `response_format`, and `text.verbosity` forwarded as chat's `verbosity`. */
function textFormat(text: unknown): Record<string, unknown> {
  if (text === undefined || text === null) return {};
  if (!isObject(text)) throw invalid('text', 'text must be an object such as {format: {type: "text"}}.');
  const out: Record<string, unknown> = {};
  if (text.verbosity !== undefined && text.verbosity !== null) out.verbosity = text.verbosity;
  const format = text.format;
  if (format === undefined || format === null) return out;
  if (!isObject(format)) throw invalid('text.format', 'text.format must be an object.');
  if (format.type === 'text') return out;
  if (format.type === 'json_object') return { ...out, response_format: { type: 'json_object' } };
  if (format.type === 'json_schema') {
    const { type: _type, ...schema } = format;
    if (typeof schema.name !== 'string' || !isObject(schema.schema)) throw invalid('text.format', 'A json_schema format needs name and schema.');
    return { ...out, response_format: { type: 'json_schema', json_schema: schema } };
  }
  throw invalid('text.format.type', 'text.format.type must be text, json_object or json_schema.');
}

function reasoningEffort(reasoning: unknown): Record<string, unknown> {
  if (reasoning === undefined || reasoning === null) return {};
  if (!isObject(reasoning)) throw invalid('reasoning', 'reasoning must be an object such as {effort: "low"}.');
  const effort = reasoning.effort;
  if (effort === undefined || effort === null || effort === 'none') return {};
  if (effort === 'minimal') return { reasoning_effort: 'low' };
  return { reasoning_effort: effort };
}

/** A chat validation error, named as the Responses request names the field. */
function asResponsesError<T>(validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    if (!(error instanceof AppError) || !error.options.param) throw error;
    const param = error.options.param
      .replace(/^messages(\[\d+\])?.*$/, 'input')
      .replace(/^max_tokens$/, 'max_output_tokens')
      .replace(/^tools\[(\d+)\]\.function\./, 'tools[$1].')
      .replace(/^response_format.*$/, 'text.format')
      .replace(/^reasoning_effort$/, 'reasoning.effort');
    const message = error.message.replace(/\bmax_tokens\b/g, 'max_output_tokens').replace(/\breasoning_effort\b/g, 'reasoning.effort');
    throw new AppError(error.code, message, { ...error.options, param });
  }
}

function echoOf(raw: Record<string, unknown>, body: ChatBody, instructions: string | null, previousId: string | null, store: boolean): ResponseEcho {
  return {
    instructions,
    max_output_tokens: body.max_tokens,
    metadata: isObject(raw.metadata) ? raw.metadata : {},
    parallel_tool_calls: body.parallel_tool_calls !== false,
    previous_response_id: previousId,
    reasoning: { effort: typeof body.reasoning_effort === 'string' ? body.reasoning_effort : null, summary: null },
    store,
    temperature: body.temperature as number,
    text: isObject(raw.text) && isObject(raw.text.format) ? { format: raw.text.format } : { format: { type: 'text' } },
    tool_choice: raw.tool_choice ?? 'auto',
    tools: Array.isArray(raw.tools) ? raw.tools : [],
    top_p: body.top_p as number,
    truncation: 'disabled',
    user: typeof raw.user === 'string' ? raw.user : null,
  };
}
