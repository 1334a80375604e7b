/**
 * How a chat turn's reply is framed for the client. The chat executor does the upstream work once for
 * every API that runs on a chat-completions upstream — dispatch and fallback, usage, the stream loop with
 * backpressure, deadlines and mid-stream errors — and a *framing* turns the upstream's completion (or its
 * stream of chunks) into what the client's API speaks: chat completions (`chatFraming`, the default), the
 * Responses API (`responses.framing.ts`), legacy text completions (`completions.framing.ts`).
 *
 * `replayAsChunks` turns a whole completion into the chunk stream an upstream would have sent, so a reply
 * obtained without streaming (tools with `toolsWithStream: emulate`, Responses tools) goes out through the
 * same stream framer as a real stream.
 */
import { fastChatReply, type UsageBounds } from './json-reply.ts';
import { StreamRewriter, type StreamFramer, type UpstreamUsage } from './stream-rewriter.ts';

export type { StreamError, StreamFramer } from './stream-rewriter.ts';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface CompletionMessage {
  role: 'assistant';
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCall[];
  function_call?: { name: string; arguments: string };
  [field: string]: unknown;
}

export interface CompletionChoice {
  index: number;
  message: CompletionMessage;
  finish_reason: string | null;
  logprobs?: unknown;
}

/** An upstream's non-streaming reply after svc's fixes (object, model, usage). */
export interface ChatCompletion {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: CompletionChoice[];
  usage: UpstreamUsage;
  [field: string]: unknown;
}


export interface ReplyFraming {
  /** The reply always reports usage (a stream asks the upstream for it and bills what it says). */
  readonly alwaysUsage: boolean;
  /** What the client's API calls the output cap, for messages (`max_tokens`, `max_output_tokens`). */
  readonly maxTokensName: string;
  /** The body of a non-streaming reply. */
  json(completion: ChatCompletion): string | Promise<string>;
  /**
   * The same body made from the upstream's text without parsing it, and the usage it reports; null when the
   * text is not in a shape the framing reads so (then the text is parsed, and `json` frames it). `model`
   * is the product id the reply names.
   */
  fastJson?(text: string, model: string, bounds: UsageBounds): { body: string; usage: UpstreamUsage } | null;
  /** A framer for one streamed reply; `model` is the product id replies name. */
  stream(model: string, includeUsage: boolean): StreamFramer;
  /** Called once the turn's final checkpoint is written, right before the reply's last bytes go out. */
  replying?(): void;
}

/** `POST /v1/chat/completions` as the official SDKs parse it (CONFORMANCE "Chat completions", "Streaming"). */
export const chatFraming: ReplyFraming = {
  alwaysUsage: false,
  maxTokensName: 'max_tokens',
  json: (completion) => JSON.stringify(completion),
  fastJson: fastChatReply,
  stream: (model, includeUsage) => new StreamRewriter(model, includeUsage),
};

/**
 * The chunks an upstream would have streamed for `completion`: per choice the role and content, each tool
 * call as its first fragment `{index, id, type, function: {name, arguments: ""}}` then its arguments, the
 * finish reason; then the usage chunk and `[DONE]`.
 */
export function replayAsChunks(completion: ChatCompletion): string {
  const head = `{"id":${JSON.stringify(completion.id)},"object":"chat.completion.chunk","created":${completion.created},"model":${JSON.stringify(completion.model)},"choices":`;
  let out = '';
  const chunk = (choice: unknown) => {
    out += `data: ${head}[${JSON.stringify(choice)}]}\n\n`;
  };
  for (const choice of completion.choices) {
    const { index, message } = choice;
    const delta: Record<string, unknown> = { role: 'assistant', content: typeof message.content === 'string' ? message.content : null };
    if (typeof message.reasoning_content === 'string') delta.reasoning_content = message.reasoning_content;
    if (typeof message.refusal === 'string') delta.refusal = message.refusal;
    chunk({ index, delta, logprobs: null, finish_reason: null });
    (message.tool_calls ?? []).forEach((call, j) => {
      chunk({ index, delta: { tool_calls: [{ index: j, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }, logprobs: null, finish_reason: null });
      if (call.function.arguments) chunk({ index, delta: { tool_calls: [{ index: j, function: { arguments: call.function.arguments } }] }, logprobs: null, finish_reason: null });
    });
    if (message.function_call) {
      chunk({ index, delta: { function_call: { name: message.function_call.name, arguments: '' } }, logprobs: null, finish_reason: null });
      chunk({ index, delta: { function_call: { arguments: message.function_call.arguments } }, logprobs: null, finish_reason: null });
    }
    chunk({ index, delta: {}, logprobs: null, finish_reason: choice.finish_reason ?? 'stop' });
  }
  out += `data: ${head}[],"usage":${JSON.stringify(completion.usage)}}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

/** A reply to the legacy `functions` API: the (first) tool call as `function_call`, finish reason `function_call`. */
export function asLegacyFunctionCall(completion: ChatCompletion): void {
  for (const choice of completion.choices) {
    const call = choice.message.tool_calls?.[0];
    if (!call) continue;
    choice.message.function_call = { name: call.function.name, arguments: call.function.arguments };
    delete choice.message.tool_calls;
    if (choice.finish_reason === 'tool_calls') choice.finish_reason = 'function_call';
  }
}
