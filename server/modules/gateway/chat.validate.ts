/**
 * Validation of a chat request (spec §2.3, DESIGN §4 "Recommended values", "Limits"). Hand-written
 * rather than a schema library: it runs on every request, names the offending `param`, and fills the
 * recommended values in place on the parsed body, which is then forwarded as is.
 */
import { AppError } from '../../errors/app-error.ts';

export interface ChatBody {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  max_tokens: number;
  n?: number;
  tools?: unknown[];
  stream_options?: { include_usage?: boolean };
  chat_template_kwargs: { enable_thinking?: boolean; [key: string]: unknown };
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
  /**
   * Request fields a model accepts beyond the chat ones (e.g. `size` for svc-img), checked by its own
   * planner; every other model still rejects them as unrecognized.
   */
  extraFields?(model: string): ReadonlySet<string> | undefined;
}

export const recommended = { temperature: 0.7, top_p: 0.8, presence_penalty: 1.5, max_tokens: 1024 } as const;

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/** Fields forwarded to the upstream besides the ones validated in detail. Anything else is rejected. */
const PASS_THROUGH = new Set(['tools', 'tool_choice', 'stop', 'n', 'seed', 'response_format', 'stream_options', 'user', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'parallel_tool_calls', 'reasoning_effort', 'max_completion_tokens']);
const KNOWN = new Set([...PASS_THROUGH, 'model', 'messages', 'stream', 'temperature', 'top_p', 'presence_penalty', 'max_tokens', 'chat_template_kwargs']);

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

function isObject(value: unknown): value is Record<string, unknown> {
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
 * `param`), `tools_require_non_streaming`, or `model_not_found` is left to the router.
 */
export function validateChatRequest(raw: unknown, limits: ValidationLimits): ChatBody {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new AppError('invalid_request', 'The request body must be a JSON object.');
  }
  const body = raw as Record<string, unknown>;
  const extra = limits.extraFields?.(typeof body.model === 'string' ? body.model : 'auto');
  for (const field in body) {
    if (!KNOWN.has(field) && !extra?.has(field)) throw invalid(field, `Unrecognized request argument supplied: ${field}.`);
  }

  if (body.model === undefined || body.model === null) body.model = 'auto';
  else if (typeof body.model !== 'string' || body.model.length === 0) throw invalid('model', 'model must be a product model id string.');

  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages', 'messages must be a non-empty array.');
  if (messages.length > limits.maxMessages) throw invalid('messages', `At most ${limits.maxMessages} messages are accepted.`);
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Record<string, unknown> | null;
    if (typeof message !== 'object' || message === null || Array.isArray(message)) throw invalid(`messages[${i}]`, 'Each message must be an object.');
    if (typeof message.role !== 'string' || !ROLES.has(message.role)) {
      throw invalid(`messages[${i}].role`, 'role must be one of system, developer, user, assistant, tool.');
    }
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

  if (body.stream === undefined || body.stream === null) delete body.stream;
  else if (typeof body.stream !== 'boolean') throw invalid('stream', 'stream must be a boolean.');

  number(body, 'temperature', 0, 2, recommended.temperature);
  number(body, 'top_p', 0, 1, recommended.top_p);
  number(body, 'presence_penalty', -2, 2, recommended.presence_penalty);
  number(body, 'frequency_penalty', -2, 2, undefined);

  // max_completion_tokens is the newer name; one of them, capped by the model.
  let maxTokens = body.max_tokens ?? body.max_completion_tokens;
  const maxParam = body.max_tokens !== undefined ? 'max_tokens' : 'max_completion_tokens';
  delete body.max_completion_tokens;
  const cap = limits.maxOutputTokens(body.model as string);
  if (maxTokens === undefined || maxTokens === null) maxTokens = Math.min(recommended.max_tokens, cap ?? recommended.max_tokens);
  else if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw invalid(maxParam, `${maxParam} must be a positive integer.`);
  } else if (cap !== undefined && maxTokens > cap) {
    throw invalid(maxParam, `${maxParam} must be at most ${cap} for model ${body.model as string}.`);
  }
  body.max_tokens = maxTokens;

  if (body.n !== undefined && body.n !== null) {
    if (typeof body.n !== 'number' || !Number.isInteger(body.n) || body.n < 1 || body.n > 8) throw invalid('n', 'n must be an integer from 1 to 8.');
  }

  if (body.reasoning_effort === null) delete body.reasoning_effort;
  const kwargs = body.chat_template_kwargs;
  if (kwargs === undefined || kwargs === null) body.chat_template_kwargs = { enable_thinking: thinkingAsked(body) };
  else if (typeof kwargs !== 'object' || Array.isArray(kwargs)) throw invalid('chat_template_kwargs', 'chat_template_kwargs must be an object.');
  else {
    const thinking = (kwargs as Record<string, unknown>).enable_thinking;
    if (thinking === undefined || thinking === null) (kwargs as Record<string, unknown>).enable_thinking = thinkingAsked(body);
    else if (typeof thinking !== 'boolean') throw invalid('chat_template_kwargs.enable_thinking', 'enable_thinking must be a boolean.');
  }

  if (body.reasoning_effort !== undefined && !['low', 'medium', 'high'].includes(body.reasoning_effort as string)) {
    throw invalid('reasoning_effort', 'reasoning_effort must be low, medium or high.');
  }
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
    if (body.stream === true && body.tools.length > 0) throw new AppError('tools_require_non_streaming', undefined, { param: 'tools' });
  }
  if (present(body.tool_choice)) {
    const choice = body.tool_choice;
    const named = isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string';
    if (!named && choice !== 'none' && choice !== 'auto' && choice !== 'required') {
      throw invalid('tool_choice', 'tool_choice must be none, auto, required or {type: "function", function: {name}}.');
    }
  }
  if (present(body.parallel_tool_calls) && typeof body.parallel_tool_calls !== 'boolean') throw invalid('parallel_tool_calls', 'parallel_tool_calls must be a boolean.');
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
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null) {
    if (typeof streamOptions !== 'object' || Array.isArray(streamOptions)) throw invalid('stream_options', 'stream_options must be an object.');
    if (body.stream !== true) throw invalid('stream_options', 'stream_options is only allowed when stream is true.');
    const include = (streamOptions as { include_usage?: unknown }).include_usage;
    if (include !== undefined && typeof include !== 'boolean') throw invalid('stream_options.include_usage', 'include_usage must be a boolean.');
  }
  return body as ChatBody;
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
