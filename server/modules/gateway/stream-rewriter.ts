/**
 * Re-frames an upstream SSE chat stream into exactly what the official SDKs parse (CONFORMANCE
 * "Streaming"): `data: <json>\n\n` events only, one `id`/`created`/`model` across chunks, `role` only in
 * the first chunk (of each choice, with n > 1), `usage: null` on every chunk and one final `choices: []`
 * usage chunk when the client asked for `include_usage` (none otherwise), `[DONE]` at the end, an
 * upstream `error` event passed on as one `data: {"error":…}` event. It also collects what was produced,
 * for billing.
 *
 * Fast path: once the first chunk has been parsed, later chunks that start with the same upstream
 * `{"id":…,"object":…,"created":…,"model":…` prefix and carry nothing to fix (no role, no usage but null) are
 * re-framed by swapping that prefix — no JSON.parse/stringify per chunk. Their text is parsed only if
 * the tokens must be estimated. Anything unusual takes the full parse.
 *
 * Byte path (`push`): such a chunk that arrives as one whole event in one read — how model servers send
 * them — is re-framed on the bytes: the prefix swapped by copying, never decoded into a string and encoded
 * back for the socket, and only its content's few bytes kept for an estimate. Relaying was 1.7–2× the
 * passthrough's CPU per chunk, most of it that round trip through strings.
 */
import { StringDecoder } from 'node:string_decoder';
import { allocChunk } from '../../http/chunked.ts';
import type { CostStamp } from '../../metering/pricing.ts';
import { BACKSLASH, CLOSE, COLON, COMMA, LF, QUOTE, SPACE } from './json-bytes.ts';

const KEY_ROLE = Buffer.from('role');
const KEY_ERROR = Buffer.from('error');
const KEY_TOOL_CALLS = Buffer.from('tool_calls');
const KEY_USAGE = Buffer.from('usage');
const KEY_CONTENT = Buffer.from('content');
const KEY_FINISH_REASON = Buffer.from('finish_reason');
const KEY_INDEX = Buffer.from('index');
/** Keys a chunk that carries only choice 0's text may hold besides `content` (`textBytes`); their values must be null where marked. */
const PLAIN_KEYS: [key: Buffer, nullOnly: boolean][] = [
  [Buffer.from('choices'), false],
  [Buffer.from('delta'), false],
  [Buffer.from('system_fingerprint'), false],
  [Buffer.from('service_tier'), false],
  [Buffer.from('logprobs'), true],
  [Buffer.from('stop_reason'), true],
];
const NULL = Buffer.from('null');
const DIGIT_0 = 0x30;
const NON_EMPTY_CONTENT = /"content":\s*"[^"]/;
const EVENT_END = Buffer.from('\n\n');
const CLOSE_EVENT = Buffer.from('}\n\n');
const USAGE_NULL_EVENT = Buffer.from(',"usage":null}\n\n');
const NO_BYTES = Buffer.alloc(0);

const LINE_BREAK = Buffer.from('\n');

/** A string's bytes in their own memory, not a slice of Node's shared pool: for what lives as long as its stream. */
export function unpooled(text: string): Buffer {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/** Where the JSON string starting at `from` ends (its closing quote), or -1 when it does not end on this line before `end`. */
function stringEnd(bytes: Buffer, from: number, end: number): number {
  for (let i = from; i < end; i++) {
    const byte = bytes[i];
    if (byte === BACKSLASH) i++;
    else if (byte === QUOTE) return i;
    else if (byte === LF) return -1;
  }
  return -1;
}

/** Whether the `length` bytes at `at` are `key`. */
function isKey(bytes: Buffer, at: number, length: number, key: Buffer): boolean {
  if (length !== key.length) return false;
  for (let i = 0; i < length; i++) if (bytes[at + i] !== key[i]) return false;
  return true;
}

/** Whether the value at `at` is `null`. */
function isNull(bytes: Buffer, at: number): boolean {
  return isKey(bytes, at, 4, NULL);
}

/**
 * Whether `length` bytes at `at` are a key a chunk with only choice 0's text may hold, with the value at
 * `value` (`PLAIN_KEYS`; `index` 0; `content` not a string, which the scan reads itself).
 */
function isPlainKey(bytes: Buffer, at: number, length: number, value: number): boolean {
  if (isKey(bytes, at, length, KEY_INDEX)) return bytes[value] === DIGIT_0 && !(bytes[value + 1]! >= DIGIT_0 && bytes[value + 1]! <= DIGIT_0 + 9);
  if (isKey(bytes, at, length, KEY_CONTENT)) return isNull(bytes, value);
  for (const [key, nullOnly] of PLAIN_KEYS) if (isKey(bytes, at, length, key)) return !nullOnly || isNull(bytes, value);
  return false;
}

/**
 * JSON-escaped text gathered a piece at a time from chunks' bytes: copied into one buffer per stream rather
 * than kept as a string per chunk, which lived as long as the stream (so was promoted out of the young
 * generation) and was seldom read.
 */
export class EscapedText {
  #bytes: Buffer | null = null;
  length = 0;

  /** Adds `from`–`to` of `bytes`. */
  append(bytes: Buffer, from: number, to: number): void {
    const length = this.length + (to - from);
    let kept = this.#bytes;
    if (kept === null || length > kept.length) {
      // Not from Node's shared 8 KiB pool: a stream's buffer outlives the chunks around it and would hold their slab.
      const grown = Buffer.allocUnsafeSlow(Math.max(1024, 2 * length));
      if (kept !== null) kept.copy(grown, 0, 0, this.length);
      kept = this.#bytes = grown;
    }
    bytes.copy(kept, this.length, from, to);
    this.length = length;
  }

  /** Adds text that is not escaped yet. */
  appendText(text: string): void {
    const escaped = Buffer.from(JSON.stringify(text));
    this.append(escaped, 1, escaped.length - 1);
  }

  /** The first `end` bytes, still escaped. */
  escaped(end = this.length): string {
    return this.#bytes === null ? '' : this.#bytes.toString('utf8', 0, end);
  }

  /** The text, unescaped. */
  text(): string {
    return JSON.parse(`"${this.escaped()}"`) as string;
  }

  clear(): void {
    this.length = 0;
  }
}

/** The error object of a mid-stream failure (the envelope's `error`). */
export interface StreamError {
  message: string;
  type: string;
  code: string;
  param: string | null;
}

/** Re-frames an upstream chat SSE stream as the client's API; also what the stream produced, for billing. */
export interface StreamFramer {
  /**
   * Feeds upstream bytes; returns what to send (maybe empty: nothing for the client yet). `chunked`: a Buffer
   * returned is a whole HTTP/1.1 chunk, framed for the socket itself (`http/chunked.ts`); a string never is.
   */
  push(bytes: Buffer, chunked?: boolean): string | Buffer;
  /** What to send after the upstream ended normally, given the usage svc bills (null: the client did not ask). */
  end(usage: UpstreamUsage | null): string | Promise<string>;
  /** The last bytes of a stream that failed after it began. */
  fail(error: StreamError): string;
  /** Everything produced so far (content and tool-call arguments), for estimating tokens. */
  producedText(): string[];
  readonly deltas: number;
  readonly usage: UpstreamUsage | null;
  readonly finished: boolean;
  readonly done: boolean;
  readonly upstreamError: { message: string; type: string; code: string | null } | null;
}

export interface UpstreamUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  /** What svc billed, on the usage a stream ends with (`metering/pricing.ts` `costStamp`); never from the upstream. */
  cost?: CostStamp;
}

interface Chunk {
  id?: string;
  created?: number;
  model?: string;
  choices?: { index?: number; delta?: { role?: string; content?: string | null; tool_calls?: { function?: { arguments?: string } }[] }; finish_reason?: string | null }[];
  usage?: UpstreamUsage | null;
  error?: { message?: unknown; type?: unknown; code?: unknown; param?: unknown };
  [key: string]: unknown;
}

export class StreamRewriter implements StreamFramer {
  readonly #decoder = new StringDecoder('utf8');
  readonly #model: string;
  readonly #includeUsage: boolean;
  #buffer = '';
  #data: string | null = null;
  #id: string | undefined;
  #created: number | undefined;
  #first = true;
  /** Bit i set: choice i has had its role (n ≤ 8), which goes in each choice's first delta only. */
  #roles = 0;
  /** The first chunk's raw prefix up to and including its model, and what replaces it. */
  #upstreamPrefix: string | null = null;
  #ourPrefix = '';
  /** The same prefixes as bytes, after `data: `, for the byte path. */
  #upstreamHead: Buffer | null = null;
  #ourHead: Buffer = NO_BYTES;
  /** The last bytes ended an event (with no character split across reads): the next read may take the byte path. */
  #aligned = false;
  /**
   * Fast-path chunks in order, parsed only when tokens must be estimated: a text-path chunk's body after
   * the prefix (it starts with `,`), or byte-path chunks' contents still JSON-escaped, each after a line
   * break (which a JSON string never holds raw).
   */
  readonly #raw: string[] = [];
  /** Byte-path contents since the last `#raw` entry, still escaped, each followed by a line break. */
  readonly #escaped = new EscapedText();
  /** What `#scan` found in an event: where `,"usage":null` starts, where its content is (escaped), a finish reason. */
  #usageAt = -1;
  #contentFrom = -1;
  #contentTo = -1;
  #finishedAt = false;
  /** After `textBytes` found text: where it ends. */
  textEnd = 0;
  /** Content and tool-call argument text from fully parsed chunks. */
  readonly #produced: string[] = [];
  /** Number of content/tool deltas forwarded. */
  deltas = 0;
  usage: UpstreamUsage | null = null;
  finished = false;
  done = false;
  /** The upstream sent an error event. */
  upstreamError: { message: string; type: string; code: string | null } | null = null;

  constructor(model: string, includeUsage: boolean) {
    this.#model = model;
    this.#includeUsage = includeUsage;
  }

  /** Feeds upstream bytes; returns what to send to the client (maybe empty; a Buffer framed as a chunk when `chunked`). */
  push(bytes: Buffer, chunked = false): string | Buffer {
    if (this.#aligned && this.#upstreamHead !== null) {
      const out = this.#fastBytes(bytes, this.#upstreamHead, chunked);
      if (out !== null) return out;
    }
    return this.pushText(bytes);
  }

  /** `push`, always as text (for framings that re-frame the chat events further). */
  pushText(bytes: Buffer): string {
    const n = bytes.length;
    this.#buffer += this.#decoder.write(bytes);
    let out = '';
    let start = 0;
    for (;;) {
      const newline = this.#buffer.indexOf('\n', start);
      if (newline === -1) break;
      let line = this.#buffer.slice(start, newline);
      start = newline + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line.length === 0) {
        if (this.#data !== null) {
          out += this.#dispatch(this.#data);
          this.#data = null;
          if (this.upstreamError || this.done) break;
        }
        continue;
      }
      if (line.startsWith('data:')) {
        const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
        this.#data = this.#data === null ? value : `${this.#data}\n${value}`;
      }
      // event:, id:, retry: and ':' comments are dropped: clients must never see them.
    }
    this.#buffer = this.#buffer.slice(start);
    this.#aligned = this.#buffer.length === 0 && this.#data === null && n >= 2 && bytes[n - 1] === LF && bytes[n - 2] === LF;
    return out;
  }

  /** Text to send after the upstream ended normally: the usage chunk (if asked for) and `[DONE]`. */
  end(usage: UpstreamUsage | null): string {
    let out = '';
    if (this.#includeUsage && usage) {
      out += `data: {"id":${JSON.stringify(this.#id ?? '')},"object":"chat.completion.chunk","created":${this.#created ?? Math.floor(Date.now() / 1000)},"model":${JSON.stringify(this.#model)},"choices":[],"usage":${JSON.stringify(usage)}}\n\n`;
    }
    return `${out}data: [DONE]\n\n`;
  }

  /** A failure after the stream began: the one `data: {"error": …}` event the SDKs understand mid-stream. */
  fail(error: StreamError): string {
    return `data: ${JSON.stringify({ error })}\n\n`;
  }

  /** Everything produced so far (content and tool-call arguments), for estimating tokens. */
  producedText(): string[] {
    this.#parseRaw();
    return this.#produced;
  }

  /** Moves the fast-path chunks' text into `#produced`, in order. */
  #parseRaw(): void {
    this.#closeEscaped();
    for (const entry of this.#raw.splice(0)) {
      try {
        if (entry.charCodeAt(0) === LF) for (const content of entry.slice(1).split('\n')) this.#produced.push(JSON.parse(`"${content}"`) as string);
        else this.#collect(JSON.parse(`{"x":0${entry}`) as Chunk, false); // counted in `deltas` when it was sent
      } catch {
        // not JSON after all: nothing to count
      }
    }
  }

  /** Keeps a byte-path chunk's content (`from`–`to`, still escaped) for an estimate. */
  #keepEscaped(bytes: Buffer, from: number, to: number): void {
    this.#escaped.append(bytes, from, to);
    this.#escaped.append(LINE_BREAK, 0, 1);
  }

  /** Ends the run of byte-path contents as one `#raw` entry, before an entry of another kind (order matters). */
  #closeEscaped(): void {
    const escaped = this.#escaped;
    if (escaped.length === 0) return;
    this.#raw.push(`\n${escaped.escaped(escaped.length - 1)}`);
    escaped.clear();
  }

  #dispatch(data: string): string {
    if (data === '[DONE]') {
      this.done = true;
      return '';
    }
    const prefix = this.#upstreamPrefix;
    if (prefix !== null && data.startsWith(prefix)) {
      const fast = this.#fast(data.slice(prefix.length));
      if (fast !== null) return fast;
    }
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      return '';
    }
    if (chunk.error) {
      const e = chunk.error;
      this.upstreamError = { message: typeof e.message === 'string' ? e.message : 'upstream error', type: typeof e.type === 'string' ? e.type : 'api_error', code: typeof e.code === 'string' ? e.code : null };
      return '';
    }
    if (chunk.usage) this.usage = chunk.usage;
    const choices = chunk.choices;
    if (!Array.isArray(choices) || choices.length === 0) return ''; // the usage-only chunk: re-sent by end()
    if (this.#id === undefined) {
      this.#id = chunk.id;
      this.#created = chunk.created;
    }
    if (this.#first) this.#learnPrefix(data, chunk);
    chunk.id = this.#id;
    chunk.created = this.#created;
    chunk.model = this.#model;
    for (const choice of choices) {
      const delta = choice.delta;
      if (delta) {
        const bit = 1 << ((choice.index ?? 0) & 31);
        if ((this.#roles & bit) === 0) {
          delta.role = 'assistant';
          this.#roles |= bit;
        } else if (delta.role !== undefined) delete delta.role;
      }
      if (choice.finish_reason) this.finished = true;
    }
    // What fast-path chunks produced before this one comes first.
    if (this.#raw.length > 0 || this.#escaped.length > 0) this.#parseRaw();
    this.#collect(chunk);
    this.#first = false;
    if (this.#includeUsage) chunk.usage = null;
    else if (chunk.usage !== undefined) delete chunk.usage;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  /** Takes a chunk's produced text; `count`: also count its deltas (false for one counted when it was sent). */
  #collect(chunk: Chunk, count = true): void {
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      if (!delta) continue;
      if (typeof delta.content === 'string' && delta.content.length > 0) {
        this.#produced.push(delta.content);
        if (count) this.deltas++;
      }
      if (delta.tool_calls) {
        for (const call of delta.tool_calls) if (call.function?.arguments) this.#produced.push(call.function.arguments);
        if (count) this.deltas++;
      }
    }
  }

  /** Remembers the first chunk's exact prefix when it ends with the model, as OpenAI-style servers write it. */
  #learnPrefix(data: string, chunk: Chunk): void {
    if (typeof chunk.id !== 'string' || typeof chunk.created !== 'number' || typeof chunk.model !== 'string') return;
    const expected = `{"id":${JSON.stringify(chunk.id)},"object":"chat.completion.chunk","created":${chunk.created},"model":${JSON.stringify(chunk.model)}`;
    if (!data.startsWith(expected)) return;
    this.#upstreamPrefix = expected;
    this.#ourPrefix = `{"id":${JSON.stringify(chunk.id)},"object":"chat.completion.chunk","created":${chunk.created},"model":${JSON.stringify(this.#model)}`;
    // The same as bytes, for the byte path. Made now, not for the second chunk: OpenAI-style servers send the
    // role alone first, so the second chunk is the first with content, the one a client waits for.
    const heads = unpooled(`data: ${expected}data: ${this.#ourPrefix}`);
    const split = 'data: '.length + Buffer.byteLength(expected);
    this.#upstreamHead = heads.subarray(0, split);
    this.#ourHead = heads.subarray(split);
  }

  /**
   * The fast path on bytes: one whole `data: <prefix>,…}\n\n` event, re-framed by copying; null when the
   * read is anything else (several events, a line break inside, something to fix), for the text path.
   * One pass over the bytes in JavaScript: it steps over strings and looks only at keys, where seven
   * `Buffer.indexOf` searches (a native call each) were a third of svc's own CPU per relayed chunk.
   * `chunked`: the event is written into its HTTP chunk's frame, not into a buffer of its own that the
   * frame then copies: one buffer per chunk, not two.
   */
  #fastBytes(bytes: Buffer, head: Buffer, chunked: boolean): Buffer | null {
    if (!this.#scan(bytes, head, false)) return null;
    this.#keepContent(bytes);
    const h = head.length;
    const end = bytes.length - 2;
    const usage = this.#usageAt;
    // Kept for a client that asked for usage too, cut for one that did not; added where the upstream left it out.
    let bodyEnd = end;
    let tail = EVENT_END;
    if (usage !== -1 && !this.#includeUsage) {
      bodyEnd = usage - 1; // before `,"usage":null}`
      tail = CLOSE_EVENT;
    } else if (usage === -1 && this.#includeUsage) {
      bodyEnd = end - 1;
      tail = USAGE_NULL_EVENT;
    }
    const ours = this.#ourHead;
    const length = ours.length + (bodyEnd - h) + tail.length;
    const out = chunked ? allocChunk(length) : Buffer.allocUnsafe(length);
    const at = chunked ? out.length - length - 2 : 0; // after the size line, before the closing CRLF
    ours.copy(out, at);
    bytes.copy(out, at + ours.length, h, bodyEnd);
    tail.copy(out, at + ours.length + bodyEnd - h);
    return out;
  }

  /**
   * The byte path for a framing that re-frames the chat events further (`ReframedChatStream`): when `bytes` is
   * one whole event whose only news is choice 0's text — no role, finish, tool calls, reasoning or any key
   * not known to be harmless — where that text starts in `bytes`, still JSON-escaped (`textEnd`: where it
   * ends), counted and kept for billing as `push` does. -1 when the read is anything else: then `pushText`.
   */
  textBytes(bytes: Buffer): number {
    const head = this.#upstreamHead;
    if (!this.#aligned || head === null || !this.#scan(bytes, head, true) || this.#contentFrom === -1) return -1;
    this.#keepContent(bytes);
    this.textEnd = this.#contentTo;
    return this.#contentFrom;
  }

  /** What a scanned event produced, for billing: its content kept (escaped) and counted, its finish noted. */
  #keepContent(bytes: Buffer): void {
    if (this.#contentTo > this.#contentFrom) {
      this.#keepEscaped(bytes, this.#contentFrom, this.#contentTo);
      this.deltas++;
    }
    if (this.#finishedAt) this.finished = true;
  }

  /**
   * Reads one whole `data: <prefix>,…}\n\n` event on its bytes (`#usageAt`, `#contentFrom`/`#contentTo`,
   * `#finishedAt`); false when the read is anything else (several events, a line break inside, something to
   * fix). One pass in JavaScript: it steps over strings and looks only at keys, where seven `Buffer.indexOf`
   * searches (a native call each) were a third of svc's own CPU per relayed chunk. `plain`: also false unless
   * the event carries nothing but choice 0's text (`textBytes`).
   */
  #scan(bytes: Buffer, head: Buffer, plain: boolean): boolean {
    const h = head.length;
    const n = bytes.length;
    const end = n - 2; // the event's JSON ends before its "\n\n"
    if (n < h + 4 || bytes[h] !== COMMA || bytes[end - 1] !== CLOSE || bytes[end] !== LF || bytes[n - 1] !== LF) return false;
    for (let i = 0; i < h; i++) if (bytes[i] !== head[i]) return false;
    let usage = -1;
    let contentFrom = -1;
    let contentTo = -1;
    let finished = false;
    let i = h;
    while (i < end) {
      const byte = bytes[i];
      if (byte === LF) return false; // a second line: not one plain event
      if (byte !== QUOTE) {
        i++;
        continue;
      }
      const close = stringEnd(bytes, i + 1, end);
      if (close === -1) return false;
      let next = close + 1;
      while (bytes[next] === SPACE) next++;
      if (bytes[next] !== COLON) {
        i = close + 1; // a string value
        continue;
      }
      let value = next + 1;
      while (bytes[value] === SPACE) value++;
      const key = i + 1;
      const length = close - key;
      // Chunks that need the full treatment: the role to fix, an error, tool calls.
      if (isKey(bytes, key, length, KEY_ROLE) || isKey(bytes, key, length, KEY_ERROR) || isKey(bytes, key, length, KEY_TOOL_CALLS)) return false;
      if (isKey(bytes, key, length, KEY_USAGE)) {
        // As on the text path: only `"usage":null`, last (OpenAI-style servers put it on every chunk).
        if (i !== end - 13 || bytes[i - 1] !== COMMA || value !== i + 8 || !isNull(bytes, value)) return false;
        usage = i;
      } else if (isKey(bytes, key, length, KEY_CONTENT) && bytes[value] === QUOTE) {
        if (contentFrom !== -1) return false; // several choices in one chunk: the text path counts each
        contentFrom = value + 1;
        contentTo = stringEnd(bytes, contentFrom, end);
        if (contentTo === -1) return false;
        i = contentTo + 1;
        continue;
      } else if (isKey(bytes, key, length, KEY_FINISH_REASON)) {
        if (bytes[value] === QUOTE) {
          if (plain) return false;
          finished = true;
        } else if (plain && !isNull(bytes, value)) return false;
      } else if (plain && !isPlainKey(bytes, key, length, value)) return false;
      i = value;
    }
    this.#usageAt = usage;
    this.#contentFrom = contentFrom;
    this.#contentTo = contentTo;
    this.#finishedAt = finished;
    return true;
  }

  /** Re-frames a chunk without parsing it, or returns null when it needs the full treatment. */
  #fast(rest: string): string | null {
    if (rest.charCodeAt(0) !== 44 /* , */ || !rest.endsWith('}') || rest.includes('"role"') || rest.includes('"error"')) return null;
    let body = rest;
    if (rest.includes('"usage"')) {
      // We always ask the upstream for usage, so OpenAI-style servers put `"usage":null` on every chunk:
      // kept for a client that asked too, cut for one that did not.
      if (!rest.endsWith(',"usage":null}') || rest.indexOf('"usage"') !== rest.length - 13) return null;
      if (!this.#includeUsage) body = `${rest.slice(0, -14)}}`;
    } else if (this.#includeUsage) {
      body = `${rest.slice(0, -1)},"usage":null}`;
    }
    if (rest.includes('"finish_reason":"') || rest.includes('"finish_reason": "')) this.finished = true;
    if (NON_EMPTY_CONTENT.test(rest) || rest.includes('"tool_calls"')) this.deltas++;
    this.#closeEscaped();
    this.#raw.push(rest);
    return `data: ${this.#ourPrefix}${body}\n\n`;
  }
}

/**
 * A framer for another API over the chat stream (legacy completions, Responses): the chat rewriter does the
 * normalising and the billing counts; a subclass turns its chat events into its own (`push`, `end`, `fail`).
 */
export abstract class ReframedChatStream implements StreamFramer {
  protected readonly chat: StreamRewriter;

  constructor(model: string, includeUsage: boolean) {
    this.chat = new StreamRewriter(model, includeUsage);
  }

  abstract push(bytes: Buffer, chunked?: boolean): string | Buffer;
  abstract end(usage: UpstreamUsage | null): string | Promise<string>;
  abstract fail(error: StreamError): string;

  get deltas(): number {
    return this.chat.deltas;
  }
  get usage(): UpstreamUsage | null {
    return this.chat.usage;
  }
  get finished(): boolean {
    return this.chat.finished;
  }
  get done(): boolean {
    return this.chat.done;
  }
  get upstreamError() {
    return this.chat.upstreamError;
  }

  producedText(): string[] {
    return this.chat.producedText();
  }
}
