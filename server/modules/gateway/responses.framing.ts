/**
 * The Responses API's reply (CONFORMANCE "Responses API") over a chat-completions upstream: a `response`
 * object with its output items (`responses.items.ts`), or the SSE event stream (`event:` + `data:` lines,
 * each with `type` and `sequence_number`): `response.created`, `response.in_progress`, per item
 * `response.output_item.added` … `response.output_item.done` with the text and argument deltas between,
 * then `response.completed` (or `response.incomplete`) carrying usage. A failure after the stream began is
 * an `error` event then `response.failed`.
 *
 * Searches svc ran for the reply (`hosted-search.ts`, set in `searches` before it frames) come first, as
 * `web_search_call` items; the message's text carries `url_citation` annotations for the results it cites.
 * A tool call whose tool is not a plain function (a custom tool, local shell, tool search) is written whole
 * when its arguments are complete: its item is made from them.
 *
 * A completed response is kept (`responses.store.ts`): the response object as sent, its input items, and
 * the conversation it ended with. Its writes are issued before the last bytes go out but not waited for, so
 * the reply does not wait a Redis round trip: a client that chains on it (or retrieves it) at once still
 * finds it, as its reads reach Redis after those writes (`ResponseStore.save`).
 */
import type { ChatMessage } from './chat.validate.ts';
import { plainReply, type UsageBounds } from './json-reply.ts';
import type { ChatCompletion, CompletionMessage, StreamError, StreamFramer, ToolCall } from './framing.ts';
import type { SearchingFraming, SearchRound } from './hosted-search.ts';
import {
  asChatMessage,
  outputText,
  responsesId,
  toolCallItem,
  webSearchItems,
  type FunctionCallItem,
  type MessageItem,
  type OutputItem,
  type OutputText,
  type Refusal,
  type ToolCallItem,
} from './responses.items.ts';
import { messageItemId, type ResponseStore } from './responses.store.ts';
import type { ToolNames } from './responses.tools.ts';
import { allocChunk } from '../../http/chunked.ts';
import { EscapedText, ReframedChatStream, unpooled, type UpstreamUsage } from './stream-rewriter.ts';

export { responsesId } from './responses.items.ts';

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
  /** The request's input items, as `input_items` lists them. */
  input: Record<string, unknown>[];
  /** The client's tool behind each chat function name. */
  names: ToolNames;
}

export class ResponsesFraming implements SearchingFraming {
  readonly alwaysUsage = true;
  readonly maxTokensName = 'max_output_tokens';
  readonly context: ResponsesContext;
  searches: SearchRound[] = [];

  constructor(context: ResponsesContext) {
    this.context = context;
  }

  json(completion: ChatCompletion): string {
    const choice = completion.choices[0];
    const output: OutputItem[] = webSearchItems(this.searches);
    if (choice) {
      const content = messageContent(choice.message, this.searches);
      if (content.length > 0 || !choice.message.tool_calls?.length) {
        output.push({ type: 'message', id: this.messageId(), status: 'completed', role: 'assistant', content: content.length > 0 ? content : [outputText('')] });
      }
      for (const call of choice.message.tool_calls ?? []) output.push(toolCallItem(call, this.context.names));
    }
    const json = this.responseJson(completion.model, choice?.finish_reason ?? 'stop', output, completion.usage);
    this.keep(output, json);
    return json;
  }

  /**
   * `json`'s body made from the upstream's text (`plainReply`): a plain text reply's content is copied into
   * the response, still escaped, and nothing is parsed or serialised but the echo, once (issue 48). Null —
   * the text is parsed — when searches ran (their citations need the text) or the reply is not plain text.
   */
  fastJson(text: string, model: string, bounds: UsageBounds): { body: string; usage: UpstreamUsage } | null {
    if (this.searches.length > 0) return null;
    const reply = plainReply(text, bounds);
    if (!reply) return null;
    const content = `"${reply.content}"`;
    const output = `[{"type":"message","id":"${this.messageId()}","status":"completed","role":"assistant","content":[{"type":"output_text","text":${content},"annotations":[],"logprobs":[]}]}]`;
    const body = this.#json(model, reply.finishReason, output, reply.usage, null);
    this.#keep(`{"role":"assistant","content":${content}}`, body);
    return { body, usage: reply.usage };
  }

  stream(model: string): StreamFramer {
    return new ResponsesStream(this, model);
  }

  /**
   * The kept response's writes go to the socket now (`ResponseStore.flush`), if the tick's end has not sent
   * them yet: a reply that awaited nothing (no final checkpoint) would otherwise be ahead of them.
   */
  replying(): void {
    this.context.store?.flush();
  }

  /**
   * The `response` object in a given state, as JSON: what `JSON.stringify(this.response(…))` gives, byte for
   * byte (`responses-framing.test.ts` holds the two together), with the echo — the same in every state —
   * serialised once per response rather than spread into a new object and serialised each time (issue 48).
   */
  responseJson(model: string, finishReason: string | null, output: OutputItem[], usage: UpstreamUsage | null, failed: StreamError | null = null): string {
    return this.#json(model, finishReason, JSON.stringify(output), usage, failed);
  }

  /** `responseJson` with its output items serialised already. */
  #json(model: string, finishReason: string | null, output: string, usage: UpstreamUsage | null, failed: StreamError | null): string {
    const incomplete = incompleteReason(finishReason);
    const status = responseStatus(finishReason, incomplete, failed);
    // `{"instructions":…`: the echo always has members, so its tail follows a comma.
    this.#echoTail ??= `,${JSON.stringify(this.context.echo).slice(1)}`;
    return (
      `{"id":${JSON.stringify(this.context.id)},"object":"response","created_at":${JSON.stringify(this.context.createdAt)},"status":"${status}"` +
      `,"error":${failed ? JSON.stringify({ code: failed.code, message: failed.message }) : 'null'}` +
      `,"incomplete_details":${incomplete ? `{"reason":"${incomplete}"}` : 'null'}` +
      `,"model":${JSON.stringify(model)},"output":${output},"usage":${usage ? usageJson(usage) : 'null'}${this.#echoTail}`
    );
  }

  #echoTail: string | null = null;
  #messages = 0;

  /**
   * The id of the response's next message item: made from the response's id (`messageItemId`), so an
   * `item_reference` to it finds the kept response. A random one for an id svc did not make.
   */
  messageId(): string {
    return messageItemId(this.context.id, this.#messages++) ?? responsesId('msg');
  }

  /** The `response` object in a given state (what `responseJson` serialises). */
  response(model: string, finishReason: string | null, output: OutputItem[], usage: UpstreamUsage | null, failed: StreamError | null = null): Record<string, unknown> {
    const incomplete = incompleteReason(finishReason);
    const status = responseStatus(finishReason, incomplete, failed);
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

  /**
   * Keeps the finished response: its object as sent (for `GET /v1/responses/{id}`, and `item_reference` to
   * its message items), its input items and the conversation for `previous_response_id`.
   */
  keep(output: OutputItem[], response: string): void {
    if (!this.context.store) return;
    const reply = asChatMessage(output);
    this.#keep(reply && JSON.stringify(reply), response);
  }

  /** `keep` with the reply's chat message serialised already. */
  #keep(reply: string | null, response: string): void {
    const { store, payerId, id, conversation, input } = this.context;
    if (!store) return;
    const before = JSON.stringify(conversation);
    const ended = reply === null ? before : before === '[]' ? `[${reply}]` : `${before.slice(0, -1)},${reply}]`;
    // A store that is down costs the chaining, not the reply: the client already has its answer.
    void store.save(payerId, id, { conversation: ended, response, input: JSON.stringify(input) }).catch(() => undefined);
  }
}

function incompleteReason(finishReason: string | null): 'max_output_tokens' | 'content_filter' | null {
  return finishReason === 'length' ? 'max_output_tokens' : finishReason === 'content_filter' ? 'content_filter' : null;
}

function responseStatus(finishReason: string | null, incomplete: string | null, failed: StreamError | null): 'failed' | 'in_progress' | 'incomplete' | 'completed' {
  return failed ? 'failed' : finishReason === null ? 'in_progress' : incomplete ? 'incomplete' : 'completed';
}

/** The Responses `usage` of a chat completion's usage. */
function responsesUsage(usage: UpstreamUsage) {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
    // A stream's cost (`response.completed`): what its ledger row records.
    ...(usage.cost && { cost: usage.cost }),
  };
}

/** `JSON.stringify(responsesUsage(usage))`, its counts (whole numbers) written in place. */
function usageJson(usage: UpstreamUsage): string {
  if (usage.cost) return JSON.stringify(responsesUsage(usage));
  const total = usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens;
  return `{"input_tokens":${usage.prompt_tokens},"input_tokens_details":{"cached_tokens":0},"output_tokens":${usage.completion_tokens},"output_tokens_details":{"reasoning_tokens":0},"total_tokens":${total}}`;
}

function messageContent(message: CompletionMessage, searches: readonly SearchRound[]): (OutputText | Refusal)[] {
  const content: (OutputText | Refusal)[] = [];
  if (typeof message.content === 'string' && message.content.length > 0) content.push(outputText(message.content, searches));
  if (typeof message.refusal === 'string' && message.refusal.length > 0) content.push({ type: 'refusal', refusal: message.refusal });
  return content;
}

interface ChunkToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface Chunk {
  choices?: { index?: number; delta?: { content?: string | null; refusal?: string | null; tool_calls?: ChunkToolCall[] }; finish_reason?: string | null }[];
}

/** A tool call being written: a function call streams its arguments; another kind is written whole at its end. */
interface OpenCall {
  index: number;
  call: ToolCall;
  item: ToolCallItem | null;
}

/** A message item being written: its output index, its text so far (escaped), and its delta events' bytes from the item id to the text. */
interface OpenMessage {
  item: MessageItem;
  index: number;
  text: EscapedText;
  middle: Buffer;
}

/** A text delta event's bytes before its sequence number, and after its text. */
const TEXT_DELTA_HEAD = Buffer.from('event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":');
const TEXT_DELTA_TAIL = Buffer.from('","logprobs":[]}\n\n');
const EVENT_END = Buffer.from('\n\n');

/**
 * The event stream: the chat chunks the stream rewriter has normalized (role, usage, errors handled
 * there) become Responses events. Only choice 0 exists in this API. Once the message item is open, a chunk
 * that carries only text and is read whole is re-framed on its bytes (`StreamRewriter.textBytes`): its text,
 * still JSON-escaped, is copied between the event's bytes before and after it (made when the item opens),
 * straight into the HTTP chunk's frame, and kept escaped for the item's final text — no chunk parsed and no
 * event serialised per chunk.
 */
class ResponsesStream extends ReframedChatStream {
  readonly #framing: ResponsesFraming;
  readonly #model: string;
  #sequence = 0;
  #started = false;
  readonly #output: OutputItem[] = [];
  /** The message item being written. */
  #message: OpenMessage | null = null;
  /** Tool calls being written, by the chat tool-call index. */
  readonly #calls = new Map<number, OpenCall>();
  #finishReason: string | null = null;

  constructor(framing: ResponsesFraming, model: string) {
    super(model, true);
    this.#framing = framing;
    this.#model = model;
  }

  push(bytes: Buffer, chunked = false): string | Buffer {
    const message = this.#message;
    if (message !== null) {
      const from = this.chat.textBytes(bytes);
      if (from !== -1) return this.#textEvent(message, bytes, from, this.chat.textEnd, chunked);
      const first = bytes.indexOf(EVENT_END);
      if (first !== -1 && first + 2 < bytes.length) return this.#coalesced(bytes, chunked);
    }
    return this.#pushText(bytes);
  }

  /**
   * A read of several events (a busy upstream's writes coalesce, and then no read is one event): each whole
   * event on its own, text events on the byte path, the rest on the text path, all sent as one buffer (one
   * HTTP chunk when `chunked`). Without it a stream under load re-framed every chunk by parsing it (issue 48).
   */
  #coalesced(bytes: Buffer, chunked: boolean): Buffer {
    const pieces: Buffer[] = [];
    let length = 0;
    for (let start = 0; start < bytes.length; ) {
      const at = bytes.indexOf(EVENT_END, start);
      const end = at === -1 ? bytes.length : at + 2;
      const event = bytes.subarray(start, end);
      start = end;
      const message = this.#message;
      const from = message === null || at === -1 ? -1 : this.chat.textBytes(event);
      const out = from === -1 ? this.#pushText(event) : this.#textEvent(message!, event, from, this.chat.textEnd, false);
      if (out.length === 0) continue;
      const piece = typeof out === 'string' ? Buffer.from(out) : out;
      pieces.push(piece);
      length += piece.length;
    }
    if (!chunked) return Buffer.concat(pieces, length);
    if (length === 0) return Buffer.alloc(0);
    const frame = allocChunk(length);
    let at = frame.length - length - 2;
    for (const piece of pieces) at += piece.copy(frame, at);
    return frame;
  }

  /** The text path: the chat events parsed and re-framed. */
  #pushText(bytes: Buffer): string {
    const text = this.chat.pushText(bytes);
    if (text.length === 0) return '';
    let out = '';
    if (!this.#started) {
      this.#started = true;
      const response = this.#framing.responseJson(this.#model, null, [], null);
      out += this.#responseEvent('response.created', response) + this.#responseEvent('response.in_progress', response) + this.#searches();
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

  end(usage: UpstreamUsage | null): string {
    let out = this.#closeMessage() + this.#closeCalls();
    if (!this.#output.some((item) => item.type !== 'web_search_call')) out += this.#text('') + this.#closeMessage();
    const finishReason = this.#finishReason ?? 'stop';
    const response = this.#framing.responseJson(this.#model, finishReason, this.#output, usage);
    this.#framing.keep(this.#output, response);
    return out + this.#responseEvent(incompleteReason(finishReason) ? 'response.incomplete' : 'response.completed', response);
  }

  fail(error: StreamError): string {
    // Both shapes clients read: the documented top-level fields, and `error` (what the openai SDK throws on).
    const failed = this.#event('error', { code: error.code, message: error.message, param: error.param, error });
    return failed + this.#responseEvent('response.failed', this.#framing.responseJson(this.#model, null, this.#output, null, error));
  }

  #event(type: string, payload: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.#sequence++, ...payload })}\n\n`;
  }

  /** An event whose payload is the response (`responseJson`): what `#event(type, { response })` writes. */
  #responseEvent(type: string, response: string): string {
    return `event: ${type}\ndata: {"type":"${type}","sequence_number":${this.#sequence++},"response":${response}}\n\n`;
  }

  /** The searches svc ran before the reply, each a `web_search_call` item with its progress events. */
  #searches(): string {
    let out = '';
    for (const item of webSearchItems(this.#framing.searches)) {
      const index = this.#output.length;
      this.#output.push(item);
      const where = { output_index: index, item_id: item.id };
      out += this.#event('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress' } });
      out += this.#event('response.web_search_call.in_progress', where) + this.#event('response.web_search_call.searching', where);
      if (item.status === 'completed') out += this.#event('response.web_search_call.completed', where);
      out += this.#event('response.output_item.done', { output_index: index, item });
    }
    return out;
  }

  /** A text delta event made of bytes (`push`); `chunked`: written into an HTTP chunk's frame (`http/chunked.ts`). */
  #textEvent(message: OpenMessage, bytes: Buffer, from: number, to: number, chunked: boolean): Buffer | string {
    if (to === from) return '';
    message.text.append(bytes, from, to);
    const sequence = String(this.#sequence++);
    const length = TEXT_DELTA_HEAD.length + sequence.length + message.middle.length + (to - from) + TEXT_DELTA_TAIL.length;
    const out = chunked ? allocChunk(length) : Buffer.allocUnsafe(length);
    let at = chunked ? out.length - length - 2 : 0;
    at += TEXT_DELTA_HEAD.copy(out, at);
    at += out.write(sequence, at, 'latin1');
    at += message.middle.copy(out, at);
    at += bytes.copy(out, at, from, to);
    TEXT_DELTA_TAIL.copy(out, at);
    return out;
  }

  #text(delta: string): string {
    let out = '';
    if (!this.#message) {
      out += this.#closeCalls();
      const item: MessageItem = { type: 'message', id: this.#framing.messageId(), status: 'in_progress', role: 'assistant', content: [] };
      const index = this.#output.length;
      const middle = unpooled(`,"item_id":"${item.id}","output_index":${index},"content_index":0,"delta":"`);
      this.#message = { item, index, text: new EscapedText(), middle };
      this.#output.push(item);
      out += this.#event('response.output_item.added', { output_index: this.#message.index, item });
      out += this.#event('response.content_part.added', { item_id: item.id, output_index: this.#message.index, content_index: 0, part: outputText('') });
    }
    if (delta.length === 0) return out;
    this.#message.text.appendText(delta);
    return out + this.#event('response.output_text.delta', { item_id: this.#message.item.id, output_index: this.#message.index, content_index: 0, delta, logprobs: [] });
  }

  #closeMessage(): string {
    const open = this.#message;
    if (!open) return '';
    this.#message = null;
    const { item, index } = open;
    const text = open.text.text();
    const part = outputText(text, this.#framing.searches);
    item.content = [part];
    item.status = 'completed';
    const where = { item_id: item.id, output_index: index, content_index: 0 };
    let out = '';
    part.annotations.forEach((annotation, i) => (out += this.#event('response.output_text.annotation.added', { ...where, annotation_index: i, annotation })));
    return (
      out +
      this.#event('response.output_text.done', { ...where, text, logprobs: [] }) +
      this.#event('response.content_part.done', { ...where, part }) +
      this.#event('response.output_item.done', { output_index: index, item })
    );
  }

  #toolCall(delta: ChunkToolCall): string {
    const key = delta.index ?? 0;
    let out = '';
    let open = this.#calls.get(key);
    if (!open) {
      out += this.#closeMessage();
      const call: ToolCall = { id: delta.id ?? `call_${key}`, type: 'function', function: { name: delta.function?.name ?? '', arguments: '' } };
      const opened = toolCallItem(call, this.#framing.context.names, 'in_progress');
      // A plain function call streams its arguments; another kind's item is made whole from them at the end.
      const item = opened.type === 'function_call' ? opened : null;
      open = { index: this.#output.length, call, item };
      this.#calls.set(key, open);
      this.#output.push(opened);
      if (item) out += this.#event('response.output_item.added', { output_index: open.index, item: { ...item } });
    }
    const args = delta.function?.arguments;
    if (!args) return out;
    open.call.function.arguments += args;
    if (!open.item) return out;
    (open.item as FunctionCallItem).arguments += args;
    return out + this.#event('response.function_call_arguments.delta', { item_id: open.item.id, output_index: open.index, delta: args });
  }

  #closeCalls(): string {
    let out = '';
    for (const open of this.#calls.values()) {
      if (open.item?.status === 'completed') continue;
      if (open.item) {
        const item = open.item as FunctionCallItem;
        item.status = 'completed';
        out += this.#event('response.function_call_arguments.done', { item_id: item.id, output_index: open.index, name: item.name, arguments: item.arguments });
        out += this.#event('response.output_item.done', { output_index: open.index, item });
        continue;
      }
      const item = toolCallItem(open.call, this.#framing.context.names);
      open.item = item;
      this.#output[open.index] = item;
      out += this.#event('response.output_item.added', { output_index: open.index, item: { ...item, status: 'in_progress', ...(item.type === 'custom_tool_call' ? { input: '' } : {}) } });
      if (item.type === 'custom_tool_call') {
        out += this.#event('response.custom_tool_call_input.delta', { item_id: item.id, output_index: open.index, delta: item.input });
        out += this.#event('response.custom_tool_call_input.done', { item_id: item.id, output_index: open.index, input: item.input });
      }
      out += this.#event('response.output_item.done', { output_index: open.index, item });
    }
    return out;
  }
}
