/**
 * The Anthropic Messages API's reply over a chat-completions upstream: a `message` object with `text`,
 * `tool_use` and (when asked for) `thinking` content blocks, or its event stream — `message_start`, per
 * block `content_block_start`, `content_block_delta` (`text_delta`, `input_json_delta`, `thinking_delta`)
 * and `content_block_stop`, a `ping` after the first block starts, then `message_delta` (stop reason and
 * usage) and `message_stop`. A failure after the stream began is an `error` event, then the stream ends.
 *
 * Per chunk the work is the re-framing only: a chunk that carries just text — nearly all of them — has its
 * text moved into the Anthropic event still JSON-escaped, without parsing or serializing. Once the text
 * block is open, such a chunk read whole is re-framed on its bytes (`StreamRewriter.textBytes`): the
 * event's bytes before and after the text are made when the block opens, and the text is copied between
 * them, straight into the HTTP chunk's frame — no string decoded, built or encoded per chunk. Otherwise the
 * text path finds it in the decoded event (`textDelta`); anything else (the role, tool calls, reasoning, the
 * finish) is parsed.
 */
import { errorCodes } from '../../errors/codes.ts';
import { allocChunk } from '../../http/chunked.ts';
import { anthropicErrorType, withParam } from '../../http/anthropic-error.ts';
import { randomBase64url } from '../../infra/request-id.ts';
import type { ChatCompletion, StreamError, StreamFramer } from './framing.ts';
import { citationsIn, type SearchingFraming, type SearchRound } from './hosted-search.ts';
import { ReframedChatStream, unpooled, type UpstreamUsage } from './stream-rewriter.ts';

/** `msg_`/`toolu_`/`srvtoolu_` + 96 random bits, as Anthropic's ids look. */
export function messagesId(prefix: 'msg' | 'toolu' | 'srvtoolu'): string {
  return `${prefix}_${randomBase64url(16)}`;
}

export interface MessagesContext {
  id: string;
  /** Show the upstream's reasoning as thinking blocks (thinking was asked for, and not with display "omitted"). */
  showThinking: boolean;
  /** The request's `stop_sequences`, to tell `stop_sequence` from `end_turn`. */
  stopSequences: readonly string[];
}

type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

/** Anthropic's stop reason (and the stop sequence met) for a chat finish; `matched` is vLLM's `stop_reason`, when sent. */
function stopOf(finishReason: string | null | undefined, matched: unknown, toolUse: boolean, stopSequences: readonly string[]): { stop_reason: StopReason; stop_sequence: string | null } {
  if (finishReason === 'length') return { stop_reason: 'max_tokens', stop_sequence: null };
  if (finishReason === 'content_filter') return { stop_reason: 'refusal', stop_sequence: null };
  if (toolUse || finishReason === 'tool_calls' || finishReason === 'function_call') return { stop_reason: 'tool_use', stop_sequence: null };
  if (typeof matched === 'string' && stopSequences.includes(matched)) return { stop_reason: 'stop_sequence', stop_sequence: matched };
  return { stop_reason: 'end_turn', stop_sequence: null };
}

function usageOf(usage: UpstreamUsage | null, searches: readonly SearchRound[] = []) {
  const counts = {
    input_tokens: usage?.prompt_tokens ?? 0,
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    // A stream's cost (`message_delta`): what its ledger row records.
    ...(usage?.cost && { cost: usage.cost }),
  };
  return searches.length > 0 ? { ...counts, server_tool_use: { web_search_requests: searches.filter((round) => round.result).length } } : counts;
}

/**
 * The searches svc ran for a reply, as Anthropic shows its web search: per search a `server_tool_use` block
 * and a `web_search_tool_result` block with a `web_search_result` per result (or the error).
 */
function searchBlocks(searches: readonly SearchRound[]): { use: Record<string, unknown>; result: Record<string, unknown> }[] {
  return searches.map((round) => {
    const id = messagesId('srvtoolu');
    const content = round.result
      ? round.result.results.map((result) => ({ type: 'web_search_result', url: result.url, title: result.title, encrypted_content: opaque(result.snippet), page_age: result.publishedAt }))
      : { type: 'web_search_tool_result_error', error_code: 'unavailable' };
    return { use: { type: 'server_tool_use', id, name: 'web_search', input: { query: round.query } }, result: { type: 'web_search_tool_result', tool_use_id: id, content } };
  });
}

/** The `web_search_result_location` citations of a text, one per result it cites (by URL). */
function citationsOf(text: string, searches: readonly SearchRound[]): Record<string, unknown>[] {
  const seen = new Set<string>();
  return citationsIn(text, searches).flatMap(({ result }) => {
    if (seen.has(result.url)) return [];
    seen.add(result.url);
    return [{ type: 'web_search_result_location', url: result.url, title: result.title, encrypted_index: opaque(result.url), cited_text: result.snippet.slice(0, 150) }];
  });
}

/** Anthropic's opaque search fields: clients keep and send them back, svc reads nothing from them. */
function opaque(text: string): string {
  return Buffer.from(text).toString('base64url');
}

/** A tool call's arguments as the JSON text of an object: what Anthropic clients parse `input` from. */
function inputJson(args: string): string {
  if (args.trim().length === 0) return '{}';
  try {
    const input: unknown = JSON.parse(args);
    return typeof input === 'object' && input !== null && !Array.isArray(input) ? args : '{}';
  } catch {
    return '{}';
  }
}

/** The reasoning a chat upstream returns, under either name servers use. */
function reasoningOf(from: Record<string, unknown> | undefined): string | null {
  const text = from?.reasoning_content ?? from?.reasoning;
  return typeof text === 'string' && text.length > 0 ? text : null;
}

export class MessagesFraming implements SearchingFraming {
  readonly alwaysUsage = true;
  readonly maxTokensName = 'max_tokens';
  readonly context: MessagesContext;
  searches: SearchRound[] = [];

  constructor(context: MessagesContext) {
    this.context = context;
  }

  json(completion: ChatCompletion): string {
    const choice = completion.choices[0];
    const message = choice?.message;
    const content: Record<string, unknown>[] = searchBlocks(this.searches).flatMap(({ use, result }) => [use, result]);
    const thinking = this.context.showThinking ? reasoningOf(message) : null;
    if (thinking) content.push({ type: 'thinking', thinking, signature: '' });
    const text = (message?.content ?? '') + (message?.refusal ?? '');
    const citations = citationsOf(text, this.searches);
    if (text.length > 0) content.push({ type: 'text', text, ...(citations.length > 0 ? { citations } : {}) });
    for (const call of message?.tool_calls ?? []) {
      content.push({ type: 'tool_use', id: call.id || messagesId('toolu'), name: call.function.name, input: JSON.parse(inputJson(call.function.arguments)) as unknown });
    }
    // vLLM names the stop sequence that ended the reply in `stop_reason`.
    const matched = (choice as { stop_reason?: unknown } | undefined)?.stop_reason;
    const stop = stopOf(choice?.finish_reason, matched, (message?.tool_calls?.length ?? 0) > 0, this.context.stopSequences);
    return JSON.stringify({ id: this.context.id, type: 'message', role: 'assistant', model: completion.model, content, ...stop, usage: usageOf(completion.usage, this.searches) });
  }

  stream(model: string): StreamFramer {
    return new MessagesStream(this.context, model, this.searches);
  }
}

/** Where a `"delta":{"content":"…"}` chunk's text is (still escaped) in an event, when it carries nothing else to handle. */
const TEXT_DELTA = '"delta":{"content":"';
const UNFINISHED = '"finish_reason":null';

function textDelta(text: string, from: number, end: number): [number, number] | null {
  const at = text.indexOf(TEXT_DELTA, from);
  if (at === -1 || at > end) return null;
  const start = at + TEXT_DELTA.length;
  let i = start;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 /* \ */) i++;
    else if (c === 34 /* " */) break;
  }
  // Only the text in this delta (`}` closes it), and the choice goes on.
  if (i >= end || text.charCodeAt(i + 1) !== 125) return null;
  const finish = text.indexOf(UNFINISHED, i);
  return finish !== -1 && finish < end ? [start, i] : null;
}

interface Chunk {
  choices?: {
    index?: number;
    delta?: { content?: string | null; refusal?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[]; [field: string]: unknown };
    finish_reason?: string | null;
    stop_reason?: unknown;
  }[];
}

type Block = 'text' | 'thinking' | 'tool_use' | 'web_search_tool_result';

/** The event stream, from the chat events the stream rewriter normalized (role, usage and errors handled there). */
class MessagesStream extends ReframedChatStream {
  readonly #context: MessagesContext;
  readonly #model: string;
  #started = false;
  #pinged = false;
  /** The block being written, and its index; -1 before the first. */
  #open: Block | null = null;
  #index = -1;
  /** The tool call being written: its chat index and the arguments so far (sent whole when it closes, checked). */
  #tool = -1;
  #arguments = '';
  #toolUse = false;
  #finishReason: string | null = null;
  #matched: unknown = null;
  readonly #searches: readonly SearchRound[];
  /** The text block's text so far, still JSON-escaped: kept only when there are searches to cite. */
  #escaped = '';
  /** The open text block's delta event up to its text, as bytes (the byte path); null when no text block is open. */
  #textHead: Buffer | null = null;

  constructor(context: MessagesContext, model: string, searches: readonly SearchRound[]) {
    super(model, false);
    this.#context = context;
    this.#model = model;
    this.#searches = searches;
  }

  push(bytes: Buffer, chunked = false): string | Buffer {
    const head = this.#textHead;
    if (head !== null) {
      const from = this.chat.textBytes(bytes);
      if (from !== -1) return textEvent(head, bytes, from, this.chat.textEnd, chunked);
    }
    const text = this.chat.pushText(bytes);
    if (text.length === 0) return '';
    let out = this.#started ? '' : this.#start();
    let from = 0;
    while (from < text.length) {
      let end = text.indexOf('\n\n', from);
      if (end === -1) end = text.length;
      const escaped = textDelta(text, from, end);
      if (escaped !== null) {
        if (escaped[1] > escaped[0]) out += this.#text(text.slice(escaped[0], escaped[1]));
      } else if (text.startsWith('data: {', from)) out += this.#chunk(JSON.parse(text.slice(from + 6, end)) as Chunk);
      from = end + 2;
    }
    return out;
  }

  end(usage: UpstreamUsage | null): string {
    const out = (this.#started ? '' : this.#start()) + this.#close();
    const stop = stopOf(this.#finishReason, this.#matched, this.#toolUse, this.#context.stopSequences);
    return `${out}${event('message_delta', { type: 'message_delta', delta: stop, usage: usageOf(usage, this.#searches) })}event: message_stop\ndata: {"type":"message_stop"}\n\n`;
  }

  fail(error: StreamError): string {
    const type = anthropicErrorType(errorCodes[error.code as keyof typeof errorCodes]?.status ?? 500);
    return event('error', { type: 'error', error: { type, message: withParam(error) } });
  }

  #start(): string {
    this.#started = true;
    const message = { id: this.#context.id, type: 'message', role: 'assistant', model: this.#model, content: [], stop_reason: null, stop_sequence: null, usage: usageOf(null) };
    return event('message_start', { type: 'message_start', message }) + this.#searchBlocks();
  }

  /** The searches svc ran, before the reply: a `server_tool_use` block (its query as input) and its result block each. */
  #searchBlocks(): string {
    let out = '';
    for (const { use, result } of searchBlocks(this.#searches)) {
      out += this.#begin('tool_use', JSON.stringify({ ...use, input: {} }));
      this.#tool = -1;
      this.#arguments = JSON.stringify(use.input);
      out += this.#begin('web_search_tool_result', JSON.stringify(result));
    }
    return out;
  }

  /** A fully parsed chunk: choice 0's reasoning, text and tool calls, and its finish. */
  #chunk(chunk: Chunk): string {
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return '';
    const delta = choice.delta;
    let out = '';
    const reasoning = this.#context.showThinking ? reasoningOf(delta) : null;
    if (reasoning) out += this.#delta('thinking', `{"type":"thinking_delta","thinking":${JSON.stringify(reasoning)}}`);
    const text = (delta?.content ?? '') + (delta?.refusal ?? '');
    if (text.length > 0) out += this.#text(JSON.stringify(text).slice(1, -1));
    for (const call of delta?.tool_calls ?? []) out += this.#toolCall(call);
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    if (choice.stop_reason !== undefined && choice.stop_reason !== null) this.#matched = choice.stop_reason;
    return out;
  }

  #text(escaped: string): string {
    if (this.#searches.length > 0) this.#escaped += escaped;
    return this.#delta('text', `{"type":"text_delta","text":"${escaped}"}`);
  }

  /** A delta for a text or thinking block, opening that block first when another one is open. */
  #delta(block: 'text' | 'thinking', delta: string): string {
    const open = this.#open === block ? '' : this.#begin(block, block === 'text' ? '{"type":"text","text":""}' : '{"type":"thinking","thinking":"","signature":""}');
    return `${open}event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.#index},"delta":${delta}}\n\n`;
  }

  #toolCall(call: NonNullable<NonNullable<NonNullable<Chunk['choices']>[number]['delta']>['tool_calls']>[number]): string {
    const key = call.index ?? 0;
    let out = '';
    if (this.#open !== 'tool_use' || this.#tool !== key) {
      this.#toolUse = true;
      const block = { type: 'tool_use', id: call.id || messagesId('toolu'), name: call.function?.name ?? '', input: {} };
      out += this.#begin('tool_use', JSON.stringify(block));
      this.#tool = key;
      this.#arguments = '';
    }
    this.#arguments += call.function?.arguments ?? '';
    return out;
  }

  /** Closes the open block and starts the next (a `ping` follows the stream's first, as Anthropic's streams have it). */
  #begin(block: Block, start: string): string {
    let out = this.#close();
    this.#open = block;
    this.#index++;
    // Searches to cite need the text kept (`#text`): those streams stay on the text path.
    if (block === 'text' && this.#searches.length === 0) this.#textHead = unpooled(`event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.#index},"delta":{"type":"text_delta","text":"`);
    out += `event: content_block_start\ndata: {"type":"content_block_start","index":${this.#index},"content_block":${start}}\n\n`;
    if (!this.#pinged) {
      this.#pinged = true;
      out += 'event: ping\ndata: {"type":"ping"}\n\n';
    }
    return out;
  }

  #close(): string {
    if (this.#open === null) return '';
    let out = '';
    // A tool's input goes out whole when it is complete, checked: clients parse it as an object.
    if (this.#open === 'tool_use') out += event('content_block_delta', { type: 'content_block_delta', index: this.#index, delta: { type: 'input_json_delta', partial_json: inputJson(this.#arguments) } });
    if (this.#open === 'text' && this.#escaped.length > 0) {
      for (const citation of citationsOf(JSON.parse(`"${this.#escaped}"`) as string, this.#searches)) {
        out += event('content_block_delta', { type: 'content_block_delta', index: this.#index, delta: { type: 'citations_delta', citation } });
      }
      this.#escaped = '';
    }
    this.#open = null;
    this.#textHead = null;
    return `${out}event: content_block_stop\ndata: {"type":"content_block_stop","index":${this.#index}}\n\n`;
  }
}

const TEXT_TAIL = Buffer.from('"}}\n\n');

/**
 * A text delta event made of bytes: `head`, the text at `from`–`to` of `bytes` (still escaped) and the tail;
 * `chunked`: written into an HTTP chunk's frame (`http/chunked.ts`). Nothing ('') for an empty text.
 */
function textEvent(head: Buffer, bytes: Buffer, from: number, to: number, chunked: boolean): Buffer | string {
  if (to === from) return '';
  const length = head.length + (to - from) + TEXT_TAIL.length;
  const out = chunked ? allocChunk(length) : Buffer.allocUnsafe(length);
  let at = chunked ? out.length - length - 2 : 0;
  at += head.copy(out, at);
  at += bytes.copy(out, at, from, to);
  TEXT_TAIL.copy(out, at);
  return out;
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
