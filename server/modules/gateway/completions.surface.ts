/**
 * `POST /v1/completions`, the legacy text-completion API older tools still call: the prompt becomes one
 * user message of a chat request, validated and metered as chat, and the reply is framed as a text
 * completion (`completions.framing.ts`). What cannot be expressed over a chat upstream is refused by name:
 * several prompts, token-id prompts, `suffix`, `echo`, `best_of` > 1, `logprobs`.
 */
import type { ServerResponse } from 'node:http';
import { AppError } from '../../errors/app-error.ts';
import type { HttpRequest, TurnPlan } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import type { Principal } from '../../authz/principal.ts';
import type { ChatExecutor } from './chat.executor.ts';
import type { ChatSurface } from './chat.surface.ts';
import { assertJsonDepth } from './chat.validate.ts';
import { completionsFraming } from './completions.framing.ts';

function invalid(param: string, message: string): AppError {
  return new AppError('invalid_request', message, { param });
}

export class CompletionsSurface {
  readonly #pipeline: MeteringPipeline;
  readonly #surface: ChatSurface;
  readonly #chat: ChatExecutor;

  constructor(pipeline: MeteringPipeline, surface: ChatSurface, chat: ChatExecutor) {
    this.#pipeline = pipeline;
    this.#surface = surface;
    this.#chat = chat;
  }

  plan(request: HttpRequest, principal: Principal, response: ServerResponse): TurnPlan<unknown, unknown> {
    const raw = request.body;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new AppError('invalid_request', 'The request body must be a JSON object.');
    const body = raw as Record<string, unknown>;
    assertJsonDepth(body);
    const { prompt, suffix, echo, best_of: bestOf, logprobs, ...rest } = body;
    if (present(suffix)) throw invalid('suffix', 'suffix (insertion) is not supported by chat models.');
    if (echo === true) throw invalid('echo', 'echo is not supported: the prompt is not part of the reply.');
    if (present(bestOf) && bestOf !== 1) throw invalid('best_of', 'best_of is not supported; use n for several choices.');
    if (present(logprobs)) throw invalid('logprobs', 'logprobs is not supported on /v1/completions; use /v1/chat/completions with logprobs: true.');
    const text = Array.isArray(prompt) && prompt.length === 1 ? prompt[0] : prompt;
    if (typeof text !== 'string') {
      throw invalid('prompt', Array.isArray(prompt) ? 'Send one prompt (a string) per request; several prompts or token ids are not supported.' : 'prompt is required (a string).');
    }
    let chat;
    try {
      chat = this.#surface.validate({ ...rest, messages: [{ role: 'user', content: text }] }, 'config', response);
    } catch (error) {
      if (error instanceof AppError && error.options.param?.startsWith('messages')) throw new AppError(error.code, error.message, { ...error.options, param: 'prompt' });
      throw error;
    }
    if (this.#surface.routesElsewhere(chat.model)) throw invalid('model', `The model ${chat.model} answers through POST /v1/chat/completions only.`);
    return this.#chat.plan(chat, null, () => this.#pipeline.modelNotFound(principal, chat.model), completionsFraming);
  }
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}
