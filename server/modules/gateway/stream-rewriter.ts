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

const LF = 10;
const COMMA = 44;
const CLOSE = 125; // }
const USAGE_NULL = Buffer.from(',"usage":null}');
const EVENT_END = Buffer.from('\n\n');
const CLOSE_EVENT = Buffer.from('}\n\n');
const USAGE_NULL_EVENT = Buffer.from(',"usage":null}\n\n');

/** Where the JSON string starting at `from` ends (its closing quote), or -1 when it does not end before `end`. */
function closingQuote(bytes: Buffer, from: number, end: number): number {
  for (let i = from; i < end; i++) {
    const byte = bytes[i];
    if (byte === 92 /* \\ */) i++;
    else if (byte === 34 /* " */) return i;
  }
  return -1;
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
  /** Feeds upstream bytes; returns what to send (maybe empty: nothing for the client yet). */
  push(bytes: Buffer): string | Buffer;
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
  #ourHead: Buffer = Buffer.alloc(0);
  /** The last bytes ended an event (with no character split across reads): the next read may take the byte path. */
  #aligned = false;
  /**
   * Fast-path chunks in order, parsed only when tokens must be estimated: a text-path chunk's body after
   * the prefix (it starts with `,`), or a byte-path chunk's content still JSON-escaped, after a `"`.
   */
  readonly #raw: string[] = [];
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

  /** Feeds upstream bytes; returns what to send to the client (maybe empty). */
  push(bytes: Buffer): string | Buffer {
    if (this.#aligned && this.#upstreamHead !== null) {
      const out = this.#fastBytes(bytes, this.#upstreamHead);
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
    for (const entry of this.#raw.splice(0)) {
      try {
        if (entry.charCodeAt(0) === 34 /* " */) this.#produced.push(JSON.parse(`${entry}"`) as string);
        else this.#collect(JSON.parse(`{"x":0${entry}`) as Chunk);
      } catch {
        // not JSON after all: nothing to count
      }
    }
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
    if (this.#raw.length > 0) this.#parseRaw();
    this.#collect(chunk);
    this.#first = false;
    if (this.#includeUsage) chunk.usage = null;
    else if (chunk.usage !== undefined) delete chunk.usage;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  #collect(chunk: Chunk): void {
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      if (!delta) continue;
      if (typeof delta.content === 'string' && delta.content.length > 0) {
        this.#produced.push(delta.content);
        this.deltas++;
      }
      if (delta.tool_calls) {
        for (const call of delta.tool_calls) if (call.function?.arguments) this.#produced.push(call.function.arguments);
        this.deltas++;
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
    this.#upstreamHead = Buffer.from(`data: ${expected}`);
    this.#ourHead = Buffer.from(`data: ${this.#ourPrefix}`);
  }

  /**
   * The fast path on bytes: one whole `data: <prefix>,…}\n\n` event, re-framed by copying; null when the
   * read is anything else (several events, a line break inside, something to fix), for the text path.
   */
  #fastBytes(bytes: Buffer, head: Buffer): Buffer | null {
    const h = head.length;
    const n = bytes.length;
    // Exactly one event: its only line breaks are the two that end it, after its closing brace.
    if (n < h + 4 || bytes[h] !== COMMA || bytes[n - 3] !== CLOSE || bytes.indexOf(LF, h) !== n - 2 || bytes[n - 1] !== LF) return null;
    if (bytes.compare(head, 0, h, 0, h) !== 0) return null;
    if (bytes.indexOf('"role"', h) !== -1 || bytes.indexOf('"error"', h) !== -1 || bytes.indexOf('"tool_calls"', h) !== -1) return null;
    const end = n - 2;
    const usage = bytes.indexOf('"usage"', h);
    // As on the text path: only `"usage":null`, last (OpenAI-style servers put it on every chunk).
    if (usage !== -1 && (usage !== end - 13 || bytes.compare(USAGE_NULL, 0, USAGE_NULL.length, end - USAGE_NULL.length, end) !== 0)) return null;
    const content = bytes.indexOf('"content":"', h);
    if (content !== -1) {
      const from = content + 11;
      const to = closingQuote(bytes, from, end);
      if (to === -1) return null;
      if (to > from) {
        this.#raw.push(`"${bytes.toString('utf8', from, to)}`);
        this.deltas++;
      }
    }
    if (bytes.indexOf('"finish_reason":"', h) !== -1 || bytes.indexOf('"finish_reason": "', h) !== -1) this.finished = true;
    // Kept for a client that asked for usage too, cut for one that did not; added where the upstream left it out.
    let bodyEnd = end;
    let tail = EVENT_END;
    if (usage !== -1 && !this.#includeUsage) {
      bodyEnd = end - USAGE_NULL.length;
      tail = CLOSE_EVENT;
    } else if (usage === -1 && this.#includeUsage) {
      bodyEnd = end - 1;
      tail = USAGE_NULL_EVENT;
    }
    const ours = this.#ourHead;
    const out = Buffer.allocUnsafe(ours.length + (bodyEnd - h) + tail.length);
    ours.copy(out, 0);
    bytes.copy(out, ours.length, h, bodyEnd);
    tail.copy(out, ours.length + bodyEnd - h);
    return out;
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
    if ((rest.includes('"content":"') && !rest.includes('"content":""')) || rest.includes('"tool_calls"')) this.deltas++;
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

  abstract push(bytes: Buffer): string | Buffer;
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
