/**
 * `POST /v1/chat/completions` accepts more than text models: `svc-2.1-search` answers with a search and
 * `svc-img` with images (spec §4). The surface validates the chat request once, then hands it to the
 * planner registered for its model — the chat executor for every other model.
 *
 *   surface.register('svc-img', (body, principal) => images.planFromChat(body, principal));
 *
 * Fields a model takes besides the chat ones (e.g. `size` for svc-img) reach its planner as they were sent:
 * the chat validator checks the fields svc owns and forwards the rest. Such a field is registered with its
 * model, and a request that sends it to another model is refused (400 naming the models that take it):
 * `size` on `auto` would otherwise be forwarded to a text model, which makes no image of any size.
 */
import type { ServerResponse } from 'node:http';
import type { Config } from '../../config/config.ts';
import { AppError, bilingual, type Bilingual } from '../../errors/app-error.ts';
import type { HttpRequest, TurnPlan } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import type { Principal } from '../../authz/principal.ts';
import { ModelAliases } from '../model/model.aliases.ts';
import type { ModelRegistry } from '../model/model.registry.ts';
import { chatEmptyAsAbsent, dropAbsentFields } from './absent-fields.ts';
import type { ChatExecutor } from './chat.executor.ts';
import { isObject, validateChatRequest, type ChatBody, type ValidationLimits } from './chat.validate.ts';
import { chatFraming } from './framing.ts';
import { announceCap } from './output-cap.ts';

export type ChatPlanner = (body: ChatBody, principal: Principal) => TurnPlan<unknown, unknown>;

/** A request field only some models take, and what those models make (`{field: 'size', makes: images}`). */
export interface ModelField {
  field: string;
  /** What the models that take it produce, for the refusal: "images". */
  makes: Bilingual;
}

export class ChatSurface {
  readonly #pipeline: MeteringPipeline;
  readonly #chat: ChatExecutor;
  readonly #planners = new Map<string, ChatPlanner>();
  /** Field → the models that take it, and what they make. */
  readonly #modelFields = new Map<string, { models: string[]; makes: Bilingual }>();
  readonly #limits: ValidationLimits;
  readonly #replayingLimits: ValidationLimits;
  readonly #aliases: ModelAliases;

  constructor(config: Config, registry: ModelRegistry, pipeline: MeteringPipeline, chat: ChatExecutor) {
    this.#pipeline = pipeline;
    this.#chat = chat;
    const aliases = new ModelAliases(config.compat.modelAliases, (id) => registry.get(id) !== undefined);
    this.#aliases = aliases;
    this.#limits = {
      maxMessages: config.gateway.maxMessages,
      maxOutputTokens: (model) => registry.get(model)?.maxOutputTokens,
      toolsWithStream: config.gateway.toolsWithStream,
      maxTokens: config.gateway.maxTokens,
      resolveModel: (model) => aliases.resolve(model),
    };
    this.#replayingLimits = { ...this.#limits, toolsWithStream: 'emulate' };
  }

  /**
   * Validates a chat request built by another API's surface (`/v1/responses`, `/v1/completions`,
   * `/v1/messages`). Tools with streaming may always be replayed there: those APIs have no rule against
   * them. An output cap lowered to the model's is said on `response` (`output-cap.ts`).
   */
  validate(raw: unknown, toolsWithStream: 'config' | 'emulate', response: ServerResponse | undefined): ChatBody {
    dropAbsentFields(raw, chatEmptyAsAbsent);
    const body = this.#checkModelFields(validateChatRequest(raw, toolsWithStream === 'emulate' ? this.#replayingLimits : this.#limits));
    announceCap(body, response);
    return body;
  }

  /** The svc model a requested name stands for (`compat.modelAliases`), and its output cap. */
  resolveModel(model: string): { id: string; maxOutputTokens: number | undefined } {
    const id = this.#aliases.resolve(model);
    return { id, maxOutputTokens: this.#limits.maxOutputTokens(id) };
  }

  /** Whether `model` is answered by another product's executor (images, search), which speaks chat only. */
  routesElsewhere(model: string): boolean {
    return this.#planners.has(model);
  }

  /** Routes one product model of the chat endpoint to another executor, which may take `fields` no other model takes. */
  register(modelId: string, planner: ChatPlanner, fields: readonly ModelField[] = []): void {
    this.#planners.set(modelId, planner);
    for (const { field, makes } of fields) {
      const taken = this.#modelFields.get(field) ?? { models: [], makes };
      taken.models.push(modelId);
      this.#modelFields.set(field, taken);
    }
  }

  /** Refuses a field that only other models take (`size` on `auto`), naming the models that take it. */
  #checkModelFields(body: ChatBody): ChatBody {
    for (const [field, { models, makes }] of this.#modelFields) {
      if (body[field] === undefined || body[field] === null || models.includes(body.model)) continue;
      const message = bilingual(
        '{field} is only for {models}, which {make} {makes}; {model} does not take it. Leave {field} out, or use {models}.',
        '{field} 仅适用于 {models}（{make}生成{makes}）；{model} 不接受该字段。请去掉 {field}，或改用 {models}。',
        { field, models: models.join(', '), make: { en: models.length === 1 ? 'makes' : 'make', zh: '' }, makes, model: body.model },
      );
      throw new AppError('invalid_request', message, { param: field });
    }
    return body;
  }

  /** Validates and plans one request, for an authenticated principal; what was changed is said in headers on `response`. */
  plan(request: HttpRequest, principal: Principal, response?: ServerResponse): TurnPlan<unknown, unknown> {
    // The top-level fields as sent, before validation fills them in: what the upstream body is spliced from.
    const { rawBody } = request;
    if (rawBody !== undefined) request.rawBody = undefined;
    const client = rawBody !== undefined && isObject(request.body) ? { raw: rawBody, sent: { ...request.body } } : null;
    // After `sent` is taken: a dropped field then differs from what was sent, and the upstream body is serialised without it.
    dropAbsentFields(request.body, chatEmptyAsAbsent);
    const body = this.#checkModelFields(validateChatRequest(request.body, this.#limits));
    announceCap(body, response);
    const planner = this.#planners.get(body.model);
    if (planner) return planner(body, principal);
    const length = Number(request.headers['content-length']);
    return this.#chat.plan(body, Number.isFinite(length) ? length : null, () => this.#pipeline.modelNotFound(principal, body.model), chatFraming, client);
  }
}
