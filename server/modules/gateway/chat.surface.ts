/**
 * `POST /v1/chat/completions` accepts more than text models: `svc-2.1-search` answers with a search and
 * `svc-img` with images (spec §4). The surface validates the chat request once, then hands it to the
 * planner registered for its model — the chat executor for every other model.
 *
 *   surface.register('svc-img', (body, principal) => images.planFromChat(body, principal));
 *
 * Fields a model takes besides the chat ones (e.g. `size` for svc-img) reach its planner as they were sent:
 * the chat validator checks the fields svc owns and forwards the rest.
 */
import type { Config } from '../../config/config.ts';
import type { HttpRequest, TurnPlan } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import type { Principal } from '../identity/principal.ts';
import type { ModelRegistry } from '../model/model.registry.ts';
import type { ChatExecutor } from './chat.executor.ts';
import { isObject, validateChatRequest, type ChatBody, type ValidationLimits } from './chat.validate.ts';
import { chatFraming } from './framing.ts';

export type ChatPlanner = (body: ChatBody, principal: Principal) => TurnPlan<unknown, unknown>;

export class ChatSurface {
  readonly #pipeline: MeteringPipeline;
  readonly #chat: ChatExecutor;
  readonly #planners = new Map<string, ChatPlanner>();
  readonly #limits: ValidationLimits;
  readonly #replayingLimits: ValidationLimits;

  constructor(config: Config, registry: ModelRegistry, pipeline: MeteringPipeline, chat: ChatExecutor) {
    this.#pipeline = pipeline;
    this.#chat = chat;
    this.#limits = { maxMessages: config.gateway.maxMessages, maxOutputTokens: (model) => registry.get(model)?.maxOutputTokens, toolsWithStream: config.gateway.toolsWithStream };
    this.#replayingLimits = { ...this.#limits, toolsWithStream: 'emulate' };
  }

  /**
   * Validates a chat request built by another API's surface (`/v1/responses`, `/v1/completions`). Tools
   * with streaming are always replayed there: the Responses API has no rule against them.
   */
  validate(raw: unknown, toolsWithStream: 'config' | 'emulate' = 'config'): ChatBody {
    return validateChatRequest(raw, toolsWithStream === 'emulate' ? this.#replayingLimits : this.#limits);
  }

  /** Whether `model` is answered by another product's executor (images, search), which speaks chat only. */
  routesElsewhere(model: string): boolean {
    return this.#planners.has(model);
  }

  /** Routes one product model of the chat endpoint to another executor. */
  register(modelId: string, planner: ChatPlanner): void {
    this.#planners.set(modelId, planner);
  }

  /** Validates and plans one request, for an authenticated principal. */
  plan(request: HttpRequest, principal: Principal): TurnPlan<unknown, unknown> {
    // The top-level fields as sent, before validation fills them in: what the upstream body is spliced from.
    const { rawBody } = request;
    if (rawBody !== undefined) request.rawBody = undefined;
    const client = rawBody !== undefined && isObject(request.body) ? { raw: rawBody, sent: { ...request.body } } : null;
    const body = validateChatRequest(request.body, this.#limits);
    const planner = this.#planners.get(body.model);
    if (planner) return planner(body, principal);
    const length = Number(request.headers['content-length']);
    return this.#chat.plan(body, Number.isFinite(length) ? length : null, () => this.#pipeline.modelNotFound(principal, body.model), chatFraming, client);
  }
}
