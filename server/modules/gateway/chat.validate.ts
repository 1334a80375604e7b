/**
 * Validation of a chat request (spec §2.3, DESIGN §4 "Recommended values", "Limits"). Hand-written
 * rather than a schema library: it runs on every request, names the offending `param`, and fills the
 * recommended values in place on the parsed body, which is then forwarded as is. A field it changes is
 * replaced at the top level, never edited inside: the upstream body is spliced from the client's bytes by
 * comparing the top-level fields (`wire-body.ts`).
 *
 * svc validates what it owns — the model, messages, streaming, output length, the recommended-value
 * fields, tools and the tools/stream rule, and the standard OpenAI fields it can check — and forwards every
 * other field unchanged (`store`, `metadata`, `top_k`, `min_p`, …: what the model server makes of them is
 * its business), subject to the upstream's `forwardFields` policy (`chat.executor.ts`). The legacy
 * `functions` / `function_call` become `tools` / `tool_choice` (and the reply is answered in the legacy shape).
 */
import { AppError } from '../../errors/app-error.ts';
import { loweredFrom, outputCap, type MaxTokensPolicy } from './output-cap.ts';

export interface ChatBody {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  max_tokens: number;
  n?: number;
  tools?: unknown[];
  stream_options?: { include_usage?: boolean };
  chat_template_kwargs: { enable_thinking?: boolean; [key: string]: unknown };
  /** Set when the client used the legacy `functions` API: its reply carries `function_call`. */
  [legacyFunctions]?: boolean;
  /** Set when the output cap asked for was above the model's: what was asked (`output-cap.ts`). */
  [loweredFrom]?: number;
  [field: string]: unknown;
}

export interface ChatMessage {
  role: string;
  content: unknown;
  [field: string]: unknown;
}

export interface ValidationLimits {
  maxMessages: number;
  /** The model's maxOutputTokens, looked up after `model` is known. */
  maxOutputTokens(model: string): number | undefined;
  /** Tools with `stream: true`: served by a non-streaming upstream call replayed as SSE (unset = `emulate`), or refused. */
  toolsWithStream?: 'reject' | 'emulate';
  /** An output cap above the model's: lowered to it (unset = `clamp`), or refused (`output-cap.ts`). */
  maxTokens?: MaxTokensPolicy;
  /** The svc model a requested name stands for (`compat.modelAliases`); unset = names are taken as they are. */
  resolveModel?(model: string): string;
}

/** Deepest JSON nesting accepted: beyond it, serializing the body for the upstream would overflow the stack. */
export const MAX_JSON_DEPTH = 64;

/** Marks a body whose client spoke the legacy `functions` API (a symbol: never serialized upstream). */
export const legacyFunctions = Symbol('legacyFunctions');

export const recommended = { temperature: 0.7, top_p: 0.8, presence_penalty: 1.5, max_tokens: 1024 } as const;

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/** The fields svc validates (and may rewrite); every other field is the upstream's, forwarded per its policy. */
const OWNED = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'chat_template_kwargs',
  'reasoning_effort',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'functions',
  'function_call',
  'stop',
  'seed',
  'response_format',
  'user',
  'logit_bias',
  'logprobs',
  'top_logprobs',
]);

/** A request field svc validates itself (not subject to an upstream's forwarding policy). */
export function isOwnedField(field: string): boolean {
  return OWNED.has(field);
}

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Set and not null. */
function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function number(body: Record<string, unknown>, field: string, min: number, max: number, fallback: number | undefined): void {
  const value = body[field];
  if (value === undefined || value === null) {
    if (fallback === undefined) delete body[field];
    else body[field] = fallback;
    return;
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(field, `${field} must be a number between ${min} and ${max}.`);
  }
}

/**
 * Validates and normalizes `raw` in place. Returns the body typed. Throws `invalid_request` (with
 * `param`), `tools_require_non_streaming`, or `model_not_found` is left to the router. The steps run in
 * this order, so a body with several faults is answered about the first one.
 */
export function validateChatRequest(raw: unknown, limits: ValidationLimits): ChatBody {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new AppError('invalid_request', 'The request body must be a JSON object.');
  }
  const body = raw as Record<string, unknown>;
  assertJsonDepth(body);
  if (body.functions !== undefined || body.function_call !== undefined) fromLegacyFunctions(body);

  if (body.model === undefined || body.model === null) body.model = 'auto';
  else if (typeof body.model !== 'string' || body.model.length === 0) throw invalid('model', 'model must be a product model id string.');
  else if (limits.resolveModel) body.model = limits.resolveModel(body.model);

  validateMessages(body, limits.maxMessages);
  if (body.stream === undefined || body.stream === null) delete body.stream;
  else if (typeof body.stream !== 'boolean') throw invalid('stream', 'stream must be a boolean.');
  sampling(body);
  outputLength(body, limits);
  thinking(body);
  validateTools(body, limits);
  outputOptions(body);
  streamOptions(body);
  return body as ChatBody;
}

/** `messages`: 1 to `maxMessages` of them, each with a known role and content; legacy function turns converted. */
function validateMessages(body: Record<string, unknown>, maxMessages: number): void {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', 'messages must be a non-empty array.');
  if (messages.length > maxMessages) throw invalid('messages', `At most ${maxMessages} messages are accepted.`);
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Record<string, unknown> | null;
    if (typeof message !== 'object' || message === null || Array.isArray(message)) throw invalid(`messages[${i}]`, 'Each message must be an object.');
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      throw invalid(`messages[${i}].role`, 'role must be one of system, developer, user, assistant, tool.');
    }
    if (message.role === 'function' || present(message.function_call)) {
      // A new array: the top-level field is replaced, not edited inside (see the header).
      if (body.messages === messages) body.messages = [...messages];
      fromLegacyMessage(messages as Record<string, unknown>[], i);
    }
    validateMessage(message, i);
  }
}

function validateMessage(message: Record<string, unknown>, i: number): void {
  if (present(message.tool_calls)) toolCalls(message.tool_calls, `messages[${i}].tool_calls`);
  const content = message.content;
  if (Array.isArray(content)) contentParts(content, `messages[${i}].content`);
  else if (typeof content !== 'string') {
    const toolCallTurn = message.role === 'assistant' && Array.isArray(message.tool_calls);
    if (!(toolCallTurn && (content === null || content === undefined))) {
      throw invalid(`messages[${i}].content`, 'content must be a string (or an array of content parts).');
    }
  }
  if (present(message.name) && typeof message.name !== 'string') throw invalid(`messages[${i}].name`, 'name must be a string.');
  if (message.role === 'tool' && typeof message.tool_call_id !== 'string') {
    throw invalid(`messages[${i}].tool_call_id`, 'Tool messages need the tool_call_id they answer.');
  }
}

/** The sampling fields, with the recommended values filled in (DESIGN §4 "Recommended values"). */
function sampling(body: Record<string, unknown>): void {
  number(body, 'temperature', 0, 2, recommended.temperature);
  number(body, 'top_p', 0, 1, recommended.top_p);
  number(body, 'presence_penalty', -2, 2, recommended.presence_penalty);
  number(body, 'frequency_penalty', -2, 2, undefined);
}

/** `max_tokens` (or the newer `max_completion_tokens`), capped by the model (`output-cap.ts`); `n` from 1 to 8. */
function outputLength(body: Record<string, unknown>, limits: ValidationLimits): void {
  let maxTokens = body.max_tokens ?? body.max_completion_tokens;
  const maxParam = body.max_tokens !== undefined ? 'max_tokens' : 'max_completion_tokens';
  delete body.max_completion_tokens;
  const cap = limits.maxOutputTokens(body.model as string);
  if (maxTokens === undefined || maxTokens === null) maxTokens = Math.min(recommended.max_tokens, cap ?? recommended.max_tokens);
  else if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw invalid(maxParam, `${maxParam} must be a positive integer.`);
  } else {
    const served = outputCap(maxTokens, cap, limits.maxTokens ?? 'clamp', maxParam, body.model as string);
    if (served < maxTokens) (body as ChatBody)[loweredFrom] = maxTokens;
    maxTokens = served;
  }
  body.max_tokens = maxTokens;

  if (body.n !== undefined && body.n !== null) {
    if (typeof body.n !== 'number' || !Number.isInteger(body.n) || body.n < 1 || body.n > 8) throw invalid('n', 'n must be an integer from 1 to 8.');
  }
}

/** `chat_template_kwargs.enable_thinking`: on only when asked for, or implied by `reasoning_effort` medium/high. */
function thinking(body: Record<string, unknown>): void {
  if (body.reasoning_effort === null) delete body.reasoning_effort;
  const kwargs = body.chat_template_kwargs;
  if (kwargs === undefined || kwargs === null) body.chat_template_kwargs = { enable_thinking: thinkingAsked(body) };
  else if (typeof kwargs !== 'object' || Array.isArray(kwargs)) throw invalid('chat_template_kwargs', 'chat_template_kwargs must be an object.');
  else {
    const enabled = (kwargs as Record<string, unknown>).enable_thinking;
    if (enabled === undefined || enabled === null) body.chat_template_kwargs = { ...kwargs, enable_thinking: thinkingAsked(body) };
    else if (typeof enabled !== 'boolean') throw invalid('chat_template_kwargs.enable_thinking', 'enable_thinking must be a boolean.');
  }

  if (body.reasoning_effort !== undefined && !['low', 'medium', 'high'].includes(body.reasoning_effort as string)) {
    throw invalid('reasoning_effort', 'reasoning_effort must be low, medium or high.');
  }
}

/** `tools` (functions with JSON Schema parameters), the tools/stream rule, `tool_choice`, `parallel_tool_calls`. */
function validateTools(body: Record<string, unknown>, limits: ValidationLimits): void {
  if (body.tools !== undefined && body.tools !== null) {
    if (!Array.isArray(body.tools)) throw invalid('tools', 'tools must be an array.');
    body.tools.forEach((tool: unknown, i: number) => {
      if (!isObject(tool) || tool.type !== 'function' || !isObject(tool.function) || typeof tool.function.name !== 'string') {
        throw invalid(`tools[${i}]`, 'Each tool must be {type: "function", function: {name, parameters}}.');
      }
      if (present(tool.function.parameters) && !isObject(tool.function.parameters)) {
        throw invalid(`tools[${i}].function.parameters`, 'parameters must be a JSON Schema object.');
      }
    });
    if (body.stream === true && body.tools.length > 0 && limits.toolsWithStream === 'reject') {
      throw new AppError('tools_require_non_streaming', undefined, { param: 'tools' });
    }
  }
  if (present(body.tool_choice)) {
    const choice = body.tool_choice;
    const named = isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string';
    if (!named && choice !== 'none' && choice !== 'auto' && choice !== 'required') {
      throw invalid('tool_choice', 'tool_choice must be none, auto, required or {type: "function", function: {name}}.');
    }
  }
  if (present(body.parallel_tool_calls) && typeof body.parallel_tool_calls !== 'boolean') throw invalid('parallel_tool_calls', 'parallel_tool_calls must be a boolean.');
}

/** The standard OpenAI fields svc can check: logprobs, logit_bias, stop, seed, user, response_format. */
function outputOptions(body: Record<string, unknown>): void {
  if (present(body.logprobs) && typeof body.logprobs !== 'boolean') throw invalid('logprobs', 'logprobs must be a boolean.');
  if (present(body.top_logprobs)) {
    const top = body.top_logprobs;
    if (typeof top !== 'number' || !Number.isInteger(top) || top < 0 || top > 20) throw invalid('top_logprobs', 'top_logprobs must be an integer from 0 to 20.');
  }
  if (present(body.logit_bias)) {
    const bias = body.logit_bias;
    if (!isObject(bias) || !Object.values(bias).every((v) => typeof v === 'number' && v >= -100 && v <= 100)) {
      throw invalid('logit_bias', 'logit_bias must map token ids to numbers from -100 to 100.');
    }
  }
  if (body.stop !== undefined && body.stop !== null) {
    const stop = body.stop;
    const ok = typeof stop === 'string' || (Array.isArray(stop) && stop.length <= 4 && stop.every((s) => typeof s === 'string'));
    if (!ok) throw invalid('stop', 'stop must be a string or an array of up to 4 strings.');
  }
  if (body.seed !== undefined && body.seed !== null && !Number.isInteger(body.seed)) throw invalid('seed', 'seed must be an integer.');
  if (body.user !== undefined && typeof body.user !== 'string') throw invalid('user', 'user must be a string.');
  if (body.response_format !== undefined && body.response_format !== null) {
    const type = (body.response_format as { type?: unknown }).type;
    if (typeof body.response_format !== 'object' || !['text', 'json_object', 'json_schema'].includes(type as string)) {
      throw invalid('response_format', 'response_format.type must be text, json_object or json_schema.');
    }
  }
}

/** `stream_options` (`include_usage`), only with `stream: true`. */
function streamOptions(body: Record<string, unknown>): void {
  const options = body.stream_options;
  if (options === undefined || options === null) return;
  if (typeof options !== 'object' || Array.isArray(options)) throw invalid('stream_options', 'stream_options must be an object.');
  if (body.stream !== true) throw invalid('stream_options', 'stream_options is only allowed when stream is true.');
  const include = (options as { include_usage?: unknown }).include_usage;
  if (include !== undefined && typeof include !== 'boolean') throw invalid('stream_options.include_usage', 'include_usage must be a boolean.');
}

/** OpenAI content parts: text, image_url, input_audio and file (user), refusal (assistant). */
function contentParts(parts: unknown[], at: string): void {
  parts.forEach((part, j) => {
    const here = `${at}[${j}]`;
    if (!isObject(part)) throw invalid(here, 'Each content part must be an object with a type.');
    switch (part.type) {
      case 'text':
        if (typeof part.text !== 'string') throw invalid(`${here}.text`, 'A text part needs text (a string).');
        return;
      case 'image_url':
        if (!isObject(part.image_url) || typeof part.image_url.url !== 'string') throw invalid(`${here}.image_url.url`, 'An image_url part needs image_url.url (a string).');
        return;
      case 'input_audio':
        if (!isObject(part.input_audio) || typeof part.input_audio.data !== 'string') throw invalid(`${here}.input_audio.data`, 'An input_audio part needs input_audio.data.');
        return;
      case 'file':
        if (!isObject(part.file)) throw invalid(`${here}.file`, 'A file part needs a file object.');
        return;
      case 'refusal':
        if (typeof part.refusal !== 'string') throw invalid(`${here}.refusal`, 'A refusal part needs refusal (a string).');
        return;
      default:
        throw invalid(`${here}.type`, 'type must be text, image_url, input_audio, file or refusal.');
    }
  });
}

/** An assistant turn's tool calls, as the SDKs send them back: `arguments` is a JSON string. */
function toolCalls(calls: unknown, at: string): void {
  if (!Array.isArray(calls)) throw invalid(at, 'tool_calls must be an array.');
  calls.forEach((call, j) => {
    const here = `${at}[${j}]`;
    if (!isObject(call) || typeof call.id !== 'string' || call.type !== 'function' || !isObject(call.function) || typeof call.function.name !== 'string') {
      throw invalid(here, 'Each tool call must be {id, type: "function", function: {name, arguments}}.');
    }
    if (typeof call.function.arguments !== 'string') throw invalid(`${here}.function.arguments`, 'arguments must be a JSON string.');
  });
}

function thinkingAsked(body: Record<string, unknown>): boolean {
  return body.reasoning_effort === 'medium' || body.reasoning_effort === 'high';
}

/** 400 for a body nested more than `MAX_JSON_DEPTH` levels: it could not be serialized for the upstream. */
export function assertJsonDepth(body: Record<string, unknown>): void {
  if (nestedDeeperThan(body, MAX_JSON_DEPTH)) throw new AppError('invalid_request', `The request nests JSON more than ${MAX_JSON_DEPTH} levels deep.`);
}

/** True when `value` holds objects or arrays nested more than `depth` levels (the recursion stops there). */
function nestedDeeperThan(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null && nestedDeeperThan(item, depth - 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null && nestedDeeperThan(item, depth - 1)) return true;
  }
  return false;
}

/**
 * The legacy function-calling fields as tools: `functions: [{name, description, parameters}]` →
 * `tools`, `function_call: "auto" | "none" | {name}` → `tool_choice`. The body is marked so the reply
 * comes back as `message.function_call`, as such a client expects.
 */
function fromLegacyFunctions(body: Record<string, unknown>): void {
  const { functions, function_call: functionCall } = body;
  if (present(body.tools) || present(body.tool_choice)) {
    throw invalid(present(functions) ? 'functions' : 'function_call', 'Send tools and tool_choice, or the legacy functions and function_call, not both.');
  }
  delete body.functions;
  delete body.function_call;
  if (present(functions)) {
    if (!Array.isArray(functions)) throw invalid('functions', 'functions must be an array.');
    body.tools = functions.map((fn: unknown, i: number) => {
      if (!isObject(fn) || typeof fn.name !== 'string') throw invalid(`functions[${i}]`, 'Each function must be {name, description?, parameters?}.');
      return { type: 'function', function: fn };
    });
  }
  if (present(functionCall)) {
    if (functionCall === 'auto' || functionCall === 'none') body.tool_choice = functionCall;
    else if (isObject(functionCall) && typeof functionCall.name === 'string') body.tool_choice = { type: 'function', function: { name: functionCall.name } };
    else throw invalid('function_call', 'function_call must be none, auto or {name}.');
  }
  (body as { [legacyFunctions]?: boolean })[legacyFunctions] = true;
}

/**
 * A legacy conversation turn, in place: an assistant `function_call` becomes a one-call `tool_calls`, and a
 * `function` message the `tool` answer to the latest call of that name (ids are made up: the legacy API had none).
 */
function fromLegacyMessage(messages: Record<string, unknown>[], i: number): void {
  const message = messages[i]!;
  if (message.role === 'function') {
    if (typeof message.name !== 'string') throw invalid(`messages[${i}].name`, 'A function message needs the name of the function it answers.');
    message.role = 'tool';
    message.tool_call_id = `call_legacy_${lastCallOf(messages, i, message.name)}`;
    delete message.name;
    return;
  }
  const call = message.function_call;
  if (message.role !== 'assistant' || !isObject(call) || typeof call.name !== 'string' || typeof call.arguments !== 'string') {
    throw invalid(`messages[${i}].function_call`, 'function_call must be {name, arguments} on an assistant message.');
  }
  if (present(message.tool_calls)) throw invalid(`messages[${i}].function_call`, 'Send tool_calls or the legacy function_call, not both.');
  message.tool_calls = [{ id: `call_legacy_${i}`, type: 'function', function: { name: call.name, arguments: call.arguments } }];
  delete message.function_call;
}

/** Index of the latest assistant message before `before` that called `name` (its made-up call id), or `before`. */
function lastCallOf(messages: Record<string, unknown>[], before: number, name: string): number {
  for (let j = before - 1; j >= 0; j--) {
    const calls = messages[j]!.tool_calls as { id?: string; function?: { name?: string } }[] | undefined;
    const legacy = messages[j]!.function_call as { name?: string } | undefined;
    if (legacy?.name === name) return j;
    if (calls?.[0]?.function?.name === name && calls[0].id === `call_legacy_${j}`) return j;
  }
  return before;
}
