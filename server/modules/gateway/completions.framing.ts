/**
 * Legacy text completions (`POST /v1/completions`) framed from a chat reply: `object: "text_completion"`,
 * `choices[].text`; streamed as `text_completion` chunks, a usage chunk when `stream_options.include_usage`
 * asked for one, then `[DONE]`.
 */
import type { ChatCompletion, ReplyFraming, StreamError } from './framing.ts';
import { ReframedChatStream, type UpstreamUsage } from './stream-rewriter.ts';

export const completionsFraming: ReplyFraming = {
  alwaysUsage: false,
  maxTokensName: 'max_tokens',
  json: (completion: ChatCompletion) =>
    JSON.stringify({
      id: completion.id?.startsWith('chatcmpl-') ? `cmpl-${completion.id.slice(9)}` : completion.id,
      object: 'text_completion',
      created: completion.created,
      model: completion.model,
      choices: completion.choices.map((choice) => ({
        text: typeof choice.message.content === 'string' ? choice.message.content : '',
        index: choice.index,
        logprobs: null,
        finish_reason: choice.finish_reason,
      })),
      usage: completion.usage,
    }),
  stream: (model, includeUsage) => new CompletionsStream(model, includeUsage),
};

interface Chunk {
  id?: string;
  created?: number;
  choices?: { index?: number; delta?: { content?: string | null }; finish_reason?: string | null }[];
}

class CompletionsStream extends ReframedChatStream {
  readonly #model: string;
  readonly #includeUsage: boolean;
  #head: string | null = null;

  constructor(model: string, includeUsage: boolean) {
    super(model, false);
    this.#model = model;
    this.#includeUsage = includeUsage;
  }

  push(bytes: Buffer): string {
    const text = this.chat.pushText(bytes);
    if (text.length === 0) return '';
    let out = '';
    for (const event of text.split('\n\n')) {
      if (!event.startsWith('data: {')) continue;
      const chunk = JSON.parse(event.slice(6)) as Chunk;
      if (this.#head === null) {
        const id = typeof chunk.id === 'string' && chunk.id.startsWith('chatcmpl-') ? `cmpl-${chunk.id.slice(9)}` : (chunk.id ?? '');
        this.#head = `{"id":${JSON.stringify(id)},"object":"text_completion","created":${chunk.created ?? Math.floor(Date.now() / 1000)},"model":${JSON.stringify(this.#model)}`;
      }
      const choices = (chunk.choices ?? []).map((choice) => ({
        text: typeof choice.delta?.content === 'string' ? choice.delta.content : '',
        index: choice.index ?? 0,
        logprobs: null,
        finish_reason: choice.finish_reason ?? null,
      }));
      out += `data: ${this.#head},"choices":${JSON.stringify(choices)}}\n\n`;
    }
    return out;
  }

  end(usage: UpstreamUsage | null): string {
    const last = this.#includeUsage && usage && this.#head ? `data: ${this.#head},"choices":[],"usage":${JSON.stringify(usage)}}\n\n` : '';
    return `${last}data: [DONE]\n\n`;
  }

  fail(error: StreamError): string {
    return this.chat.fail(error);
  }
}
