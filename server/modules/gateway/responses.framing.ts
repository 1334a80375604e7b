/**
 * The Responses API's reply (CONFORMANCE "Responses API") over a chat-completions upstream: a `response`
 * object with `message` and `function_call` output items, or the SSE event stream (`event:` + `data:`
 * lines, each with `type` and `sequence_number`): `response.created`, `response.in_progress`, per item
 * `response.output_item.added` … `response.output_item.done` with the text and argument deltas between,
 * then `response.completed` (or `response.incomplete`) carrying usage. A failure after the stream began is
 * an `error` event then `response.failed`.
 *
 * A completed response is kept (`responses.store.ts`) before its last bytes go out, so a client that
 * chains on it at once finds it.
 */
import { randomBytes } from 'node:crypto';
import type { ChatMessage } from './chat.validate.ts';
import type { ChatCompletion, CompletionMessage, ReplyFraming, StreamError, StreamFramer, ToolCall } from './framing.ts';
import type { ResponseStore } from './responses.store.ts';
import { ReframedChatStream, type UpstreamUsage } from './stream-rewriter.ts';

/** `resp_`, `msg_`, `fc_` + 192 random bits, as OpenAI's ids look. */
export function responsesId(prefix: 'resp' | 'msg' | 'fc'): string {
  return `${prefix}_${randomBytes(24).toString('hex')}`;
}

type OutputText = { type: 'output_text'; text: string; annotations: never[]; logprobs: never[] };
type Refusal = { type: 'refusal'; refusal: string };
type MessageItem = { type: 'message'; id: string; status: 'in_progress' | 'completed'; role: 'assistant'; content: (OutputText | Refusal)[] };
type FunctionCallItem = { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: 'in_progress' | 'completed' };
type OutputItem = MessageItem | FunctionCallItem;

/** What one Responses request says about itself, echoed in its `response` object. */
export interface ResponseEcho {
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, unknown>;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: null };
  store: boolean;
  temperature: number;
  text: unknown;
  tool_choice: unknown;
  tools: unknown[];
  top_p: number;
  truncation: 'disabled';
  user: string | null;
}

export interface ResponsesContext {
  id: string;
  createdAt: number;
  echo: ResponseEcho;
  /** Where to keep the result (null: `store: false`, or retention 0). */
  store: ResponseStore | null;
  payerId: string;
  /** The conversation before this reply (earlier turns and this request's input, without `instructions`). */
  conversation: ChatMessage[];
}

export class ResponsesFraming implements ReplyFraming {
  readonly alwaysUsage = true;
  readonly maxTokensName = 'max_output_tokens';
  readonly context: ResponsesContext;

  constructor(context: ResponsesContext) {
    this.context = context;
  }

  async json(completion: ChatCompletion): Promise<string> {
    const choice = completion.choices[0];
    const output: OutputItem[] = [];
    if (choice) {
      const content = messageContent(choice.message);
      if (content.length > 0 || !choice.message.tool_calls?.length) {
        output.push({ type: 'message', id: responsesId('msg'), status: 'completed', role: 'assistant', content: content.length > 0 ? content : [outputText('')] });
      }
      for (const call of choice.message.tool_calls ?? []) {
        output.push({ type: 'function_call', id: responsesId('fc'), call_id: call.id, name: call.function.name, arguments: call.function.arguments, status: 'completed' });
      }
    }
    await this.keep(output);
    return JSON.stringify(this.response(completion.model, choice?.finish_reason ?? 'stop', output, completion.usage));
  }

  stream(model: string): StreamFramer {
    return new ResponsesStream(this, model);
  }

  /** The `response` object in a given state. */
  response(model: string, finishReason: string | null, output: OutputItem[], usage: UpstreamUsage | null, failed: StreamError | null = null): Record<string, unknown> {
    const incomplete = finishReason === 'length' ? 'max_output_tokens' : finishReason === 'content_filter' ? 'content_filter' : null;
    const status = failed ? 'failed' : finishReason === null ? 'in_progress' : incomplete ? 'incomplete' : 'completed';
    return {
      id: this.context.id,
      object: 'response',
      created_at: this.context.createdAt,
      status,
      error: failed ? { code: failed.code, message: failed.message } : null,
      incomplete_details: incomplete ? { reason: incomplete } : null,
      model,
      output,
      usage: usage ? responsesUsage(usage) : null,
      ...this.context.echo,
    };
  }

  /** Keeps the finished response for `previous_response_id` and its message items for `item_reference`. */
  async keep(output: OutputItem[]): Promise<void> {
    const { store, payerId, id, conversation } = this.context;
    if (!store) return;
    const reply = asChatMessage(output);
    const items: [string, ChatMessage][] = output
      .filter((item): item is MessageItem => item.type === 'message')
      .map((item) => [item.id, asChatMessage([item]) ?? { role: 'assistant', content: '' }]);
    // A store that is down costs the chaining, not the reply: the client already has its answer.
    await store.save(payerId, id, reply ? [...conversation, reply] : conversation, items).catch(() => undefined);
  }
}

/** The Responses `usage` of a chat completion's usage. */
function responsesUsage(usage: UpstreamUsage) {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
  };
}

function outputText(text: string): OutputText {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

function messageContent(message: CompletionMessage): (OutputText | Refusal)[] {
  const content: (OutputText | Refusal)[] = [];
  if (typeof message.content === 'string' && message.content.length > 0) content.push(outputText(message.content));
  if (typeof message.refusal === 'string' && message.refusal.length > 0) content.push({ type: 'refusal', refusal: message.refusal });
  return content;
}

/** The assistant turn of some output items, as the chat message an upstream would be sent next time. */
function asChatMessage(output: OutputItem[]): ChatMessage | null {
  const text = output.flatMap((item) => (item.type === 'message' ? item.content : [])).map((part) => (part.type === 'output_text' ? part.text : part.refusal));
  const calls: ToolCall[] = output
    .filter((item): item is FunctionCallItem => item.type === 'function_call')
    .map((item) => ({ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } }));
  if (text.length === 0 && calls.length === 0) return null;
  return { role: 'assistant', content: text.length > 0 ? text.join('') : null, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
}

interface Chunk {
  choices?: { index?: number; delta?: { content?: string | null; refusal?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] }; finish_reason?: string | null }[];
}

/**
 * The event stream: the chat chunks the stream rewriter has normalized (role, usage, errors handled
 * there) become Responses events. Only choice 0 exists in this API.
 */
class ResponsesStream extends ReframedChatStream {
  readonly #framing: ResponsesFraming;
  readonly #model: string;
  #sequence = 0;
  #started = false;
  readonly #output: OutputItem[] = [];
  /** The message item being written, its output index and text so far. */
  #message: { item: MessageItem; index: number; text: string } | null = null;
  /** Function calls being written, by the chat tool-call index. */
  readonly #calls = new Map<number, { item: FunctionCallItem; index: number }>();
  #finishReason: string | null = null;

  constructor(framing: ResponsesFraming, model: string) {
    super(model, true);
    this.#framing = framing;
    this.#model = model;
  }

  push(bytes: Buffer): string {
    const text = this.chat.pushText(bytes);
    if (text.length === 0) return '';
    let out = '';
    if (!this.#started) {
      this.#started = true;
      const response = this.#framing.response(this.#model, null, [], null);
      out += this.#event('response.created', { response }) + this.#event('response.in_progress', { response });
    }
    for (const event of text.split('\n\n')) {
      if (!event.startsWith('data: {')) continue;
      const chunk = JSON.parse(event.slice(6)) as Chunk;
      const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
      if (!choice) continue;
      const delta = choice.delta;
      if (typeof delta?.content === 'string' && delta.content.length > 0) out += this.#text(delta.content);
      for (const call of delta?.tool_calls ?? []) out += this.#toolCall(call);
      if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    }
    return out;
  }

  async end(usage: UpstreamUsage | null): Promise<string> {
    let out = this.#closeMessage() + this.#closeCalls();
    if (this.#output.length === 0) out += this.#text('') + this.#closeMessage();
    const finishReason = this.#finishReason ?? 'stop';
    await this.#framing.keep(this.#output);
    const response = this.#framing.response(this.#model, finishReason, this.#output, usage);
    return out + this.#event(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  }

  fail(error: StreamError): string {
    // Both shapes clients read: the documented top-level fields, and `error` (what the openai SDK throws on).
    const failed = this.#event('error', { code: error.code, message: error.message, param: error.param, error });
    return failed + this.#event('response.failed', { response: this.#framing.response(this.#model, null, this.#output, null, error) });
  }

  #event(type: string, payload: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.#sequence++, ...payload })}\n\n`;
  }

  #text(delta: string): string {
    let out = '';
    if (!this.#message) {
      out += this.#closeCalls();
      const item: MessageItem = { type: 'message', id: responsesId('msg'), status: 'in_progress', role: 'assistant', content: [] };
      this.#message = { item, index: this.#output.length, text: '' };
      this.#output.push(item);
      out += this.#event('response.output_item.added', { output_index: this.#message.index, item });
      out += this.#event('response.content_part.added', { item_id: item.id, output_index: this.#message.index, content_index: 0, part: outputText('') });
    }
    if (delta.length === 0) return out;
    this.#message.text += delta;
    return out + this.#event('response.output_text.delta', { item_id: this.#message.item.id, output_index: this.#message.index, content_index: 0, delta, logprobs: [] });
  }

  #closeMessage(): string {
    const open = this.#message;
    if (!open) return '';
    this.#message = null;
    const { item, index, text } = open;
    const part = outputText(text);
    item.content = [part];
    item.status = 'completed';
    return (
      this.#event('response.output_text.done', { item_id: item.id, output_index: index, content_index: 0, text, logprobs: [] }) +
      this.#event('response.content_part.done', { item_id: item.id, output_index: index, content_index: 0, part }) +
      this.#event('response.output_item.done', { output_index: index, item })
    );
  }

  #toolCall(call: NonNullable<NonNullable<NonNullable<Chunk['choices']>[number]['delta']>['tool_calls']>[number]): string {
    const key = call.index ?? 0;
    let out = '';
    let open = this.#calls.get(key);
    if (!open) {
      out += this.#closeMessage();
      const item: FunctionCallItem = { type: 'function_call', id: responsesId('fc'), call_id: call.id ?? `call_${key}`, name: call.function?.name ?? '', arguments: '', status: 'in_progress' };
      open = { item, index: this.#output.length };
      this.#calls.set(key, open);
      this.#output.push(item);
      out += this.#event('response.output_item.added', { output_index: open.index, item: { ...item } });
    }
    const args = call.function?.arguments;
    if (!args) return out;
    open.item.arguments += args;
    return out + this.#event('response.function_call_arguments.delta', { item_id: open.item.id, output_index: open.index, delta: args });
  }

  #closeCalls(): string {
    let out = '';
    for (const { item, index } of this.#calls.values()) {
      if (item.status === 'completed') continue;
      item.status = 'completed';
      out += this.#event('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: item.name, arguments: item.arguments });
      out += this.#event('response.output_item.done', { output_index: index, item });
    }
    return out;
  }
}
