/**
 * `POST /v1/responses` (the OpenAI Responses API, CONFORMANCE "Responses API") over chat-completions
 * upstreams. Another surface of the metering pipeline, not another pipeline: the planner turns a
 * Responses request into a chat request — input items and `instructions` into messages, function tools,
 * `max_output_tokens`, `text.format`, `reasoning.effort`, the conversation of `previous_response_id` and
 * the items of `item_reference` — validates it as chat, and hands it to the chat executor with the
 * Responses framing (`responses.framing.ts`). Billing, refunds and errors are the chat path's.
 *
 * Tools with `stream: true` are always answered by a non-streaming upstream call replayed as events.
 * Fields this API has that a chat upstream cannot honour are refused by name (`background`, hosted tools,
 * `conversation`, `prompt`) or ignored when they only shape OpenAI's own service (`include`,
 * `truncation`, `stream_options`); any other field is forwarded like an unknown chat field.
 */
import { AppError } from '../../errors/app-error.ts';
import type { HttpRequest, TurnPlan } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import type { Principal } from '../identity/principal.ts';
import type { ChatExecutor } from './chat.executor.ts';
import type { ChatSurface } from './chat.surface.ts';
import { assertJsonDepth, type ChatBody, type ChatMessage } from './chat.validate.ts';
import type { ToolCall } from './framing.ts';
import { responsesId, ResponsesFraming, type ResponseEcho } from './responses.framing.ts';
import type { ResponseStore } from './responses.store.ts';

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
]);

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

  constructor(pipeline: MeteringPipeline, surface: ChatSurface, chat: ChatExecutor, store: ResponseStore) {
    this.#pipeline = pipeline;
    this.#surface = surface;
    this.#chat = chat;
    this.#store = store;
  }

  async plan(request: HttpRequest, principal: Principal): Promise<TurnPlan<unknown, unknown>> {
    const raw = request.body;
    if (!isObject(raw)) throw new AppError('invalid_request', 'The request body must be a JSON object.');
    assertJsonDepth(raw);
    refuseUnsupported(raw);
    const previousId = optionalString(raw, 'previous_response_id');
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
    if (raw.tools !== undefined) chat.tools = chatTools(raw.tools);
    if (raw.tool_choice !== undefined) chat.tool_choice = chatToolChoice(raw.tool_choice);
    Object.assign(chat, textFormat(raw.text), reasoningEffort(raw.reasoning));
    const body = asResponsesError(() => this.#surface.validate(chat, 'emulate'));
    if (this.#surface.routesElsewhere(body.model)) {
      throw invalid('model', `The model ${body.model} answers through POST /v1/chat/completions only.`);
    }
    const metadata = raw.metadata;
    if (metadata !== undefined && metadata !== null && !isObject(metadata)) throw invalid('metadata', 'metadata must be an object.');
    const framing = new ResponsesFraming({
      id: responsesId('resp'),
      createdAt: Math.floor(Date.now() / 1000),
      echo: echoOf(raw, body, instructions, previousId, keep),
      store: keep && this.#store.enabled ? this.#store : null,
      payerId: principal.payer.id,
      conversation,
    });
    return this.#chat.plan(body, null, () => this.#pipeline.modelNotFound(principal, body.model), framing);
  }
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

/** Ids of the `item_reference` items of `input` (earlier replies the client did not send again). */
function referencedItems(input: unknown): string[] {
  if (!Array.isArray(input)) return [];
  const ids: string[] = [];
  input.forEach((item: unknown, i) => {
    if (!isObject(item) || item.type !== 'item_reference') return;
    if (typeof item.id !== 'string' || item.id.length === 0 || item.id.length > 128) throw invalid(`input[${i}].id`, 'An item_reference needs the id of an item this API returned.');
    ids.push(item.id);
  });
  return ids;
}

/** The input items as chat messages: a function call joins the assistant turn before it, as chat has it. */
function inputMessages(input: unknown, items: Map<string, ChatMessage>): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) throw invalid('input', 'input must be a string or an array of input items.');
  const messages: ChatMessage[] = [];
  const assistantTurn = (): ChatMessage => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last;
    const turn: ChatMessage = { role: 'assistant', content: null };
    messages.push(turn);
    return turn;
  };
  input.forEach((item: unknown, i) => {
    const at = `input[${i}]`;
    if (!isObject(item)) throw invalid(at, 'Each input item must be an object.');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const role = item.role;
        if (role !== 'user' && role !== 'system' && role !== 'developer' && role !== 'assistant') throw invalid(`${at}.role`, 'role must be user, system, developer or assistant.');
        const content = messageContent(item.content, `${at}.content`, role === 'assistant');
        if (role === 'assistant') {
          const text = typeof content === 'string' ? content : (content as { text?: string }[]).map((part) => part.text ?? '').join('');
          messages.push({ role, content: text });
        } else messages.push({ role, content });
        return;
      }
      case 'function_call': {
        if (typeof item.call_id !== 'string' || typeof item.name !== 'string' || typeof item.arguments !== 'string') {
          throw invalid(at, 'A function_call item needs call_id, name and arguments (a JSON string).');
        }
        const turn = assistantTurn();
        const calls = (turn.tool_calls ??= []) as ToolCall[];
        calls.push({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } });
        return;
      }
      case 'function_call_output': {
        if (typeof item.call_id !== 'string') throw invalid(`${at}.call_id`, 'A function_call_output item needs the call_id it answers.');
        const output = item.output;
        const content = typeof output === 'string' ? output : Array.isArray(output) ? messageContent(output, `${at}.output`, false) : JSON.stringify(output ?? '');
        messages.push({ role: 'tool', tool_call_id: item.call_id, content });
        return;
      }
      case 'item_reference': {
        const stored = items.get(item.id as string);
        if (!stored) {
          throw invalid(`${at}.id`, `Item with id ${JSON.stringify(item.id)} not found: items are kept for a limited time and only when store was not false; send its content instead.`);
        }
        const last = messages.at(-1);
        // A referenced reply followed by the calls it made is one assistant turn, as it was produced.
        if (last?.role === 'assistant' && last.content === null && stored.content !== null) last.content = stored.content;
        else messages.push({ ...stored });
        return;
      }
      case 'reasoning':
        // svc never returns reasoning items; one a client sends back carries nothing a chat upstream takes.
        return;
      default:
        throw invalid(`${at}.type`, `Input items of type ${JSON.stringify(type)} are not supported: use message, function_call, function_call_output or item_reference.`);
    }
  });
  return messages;
}

/** Responses content parts as chat content: a single text part becomes a plain string, as most upstreams like best. */
function messageContent(content: unknown, at: string, assistant: boolean): string | unknown[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalid(at, 'content must be a string or an array of content parts.');
  const parts = content.map((part: unknown, j) => {
    const here = `${at}[${j}]`;
    if (!isObject(part)) throw invalid(here, 'Each content part must be an object with a type.');
    switch (part.type) {
      case 'input_text':
      case 'output_text':
      case 'text':
        if (typeof part.text !== 'string') throw invalid(`${here}.text`, 'A text part needs text (a string).');
        return { type: 'text', text: part.text };
      case 'refusal':
        if (!assistant || typeof part.refusal !== 'string') throw invalid(`${here}.type`, 'refusal parts belong to assistant messages.');
        return { type: 'text', text: part.refusal };
      case 'input_image': {
        if (typeof part.image_url !== 'string') throw invalid(`${here}.image_url`, 'An input_image part needs image_url (a URL or data URL); file_id is not supported.');
        return { type: 'image_url', image_url: { url: part.image_url, ...(typeof part.detail === 'string' ? { detail: part.detail } : {}) } };
      }
      case 'input_file': {
        if (typeof part.file_data !== 'string') throw invalid(`${here}.file_data`, 'An input_file part needs file_data (a data URL); file_id and file_url are not supported.');
        return { type: 'file', file: { file_data: part.file_data, ...(typeof part.filename === 'string' ? { filename: part.filename } : {}) } };
      }
      case 'input_audio':
        return { type: 'input_audio', input_audio: part.input_audio };
      default:
        throw invalid(`${here}.type`, 'type must be input_text, input_image, input_file, input_audio or output_text.');
    }
  });
  if (parts.length === 1 && parts[0]!.type === 'text') return (parts[0] as { text: string }).text;
  return parts;
}

/** Responses function tools `{type, name, description, parameters, strict}` as chat tools. */
function chatTools(tools: unknown): unknown {
  if (tools === null) return undefined;
  if (!Array.isArray(tools)) throw invalid('tools', 'tools must be an array.');
  return tools.map((tool: unknown, i) => {
    if (!isObject(tool) || tool.type !== 'function') {
      throw invalid(`tools[${i}].type`, `Only function tools are supported here (${isObject(tool) ? JSON.stringify(tool.type) : 'this tool'} is a hosted tool svc does not run).`);
    }
    if (typeof tool.name !== 'string') throw invalid(`tools[${i}].name`, 'A function tool needs a name.');
    const { type: _type, ...fn } = tool;
    return { type: 'function', function: fn };
  });
}

function chatToolChoice(choice: unknown): unknown {
  if (choice === null || choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
  throw invalid('tool_choice', 'tool_choice must be auto, none, required or {type: "function", name}.');
}

/** `text.format` as `response_format`, and `text.verbosity` forwarded as chat's `verbosity`. */
function textFormat(text: unknown): Record<string, unknown> {
  if (text === undefined || text === null) return {};
  if (!isObject(text)) throw invalid('text', 'text must be an object such as {format: {type: "text"}}.');
  const out: Record<string, unknown> = {};
  if (text.verbosity !== undefined) out.verbosity = text.verbosity;
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
