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
 */
import { StringDecoder } from 'node:string_decoder';

/** The error object of a mid-stream failure (the envelope's `error`). */
export interface StreamError {
  message: string;
  type: string;
  code: string;
  param: string | null;
}

/** Re-frames an upstream chat SSE stream as the client's API; also what the stream produced, for billing. */
export interface StreamFramer {
  /** Feeds upstream bytes; returns the text to send (maybe empty: nothing for the client yet). */
  push(bytes: Buffer): string;
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
  /** Fast-path chunk bodies (after the prefix), parsed only when tokens must be estimated. */
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

  /** Feeds upstream bytes; returns the text to send to the client (maybe empty). */
  push(bytes: Buffer): string {
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
    for (const rest of this.#raw.splice(0)) {
      try {
        this.#collect(JSON.parse(`{"x":0${rest}`) as Chunk);
      } catch {
        // not JSON after all: nothing to count
      }
    }
    return this.#produced;
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

  abstract push(bytes: Buffer): string;
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
