/**
 * `GET /v1/models` and `GET /v1/models/{id}` in the OpenAI list shape, for an authenticated caller
 * (bearer API key or session token): only the ids the caller's plan may use. Each model also states its
 * limits as OpenRouter-style clients read them: `context_length` (the context window, in tokens) and
 * `max_output_tokens` (the largest output cap served; above it, `max_tokens` is lowered to it, see
 * `gateway/output-cap.ts`); an embedding model states `context_length` only. A request that sends
 * `anthropic-version` (the Anthropic SDKs, Claude Code) gets Anthropic's shape instead, and may carry its
 * key as `x-api-key`; `{id}` may then also be a name that stands for an svc model (`compat.modelAliases`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { apiKeyOrBearer } from '../../http/credential.ts';
import type { ProductModel } from './model.service.ts';

/** `created` of every catalogue entry: when this catalogue was first published (2026-11-21T00:00:00Z). */
const catalogueCreated = 1_795_219_200;
const catalogueCreatedAt = new Date(catalogueCreated * 1000).toISOString();

export async function modelRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  const principalOf = (request: FastifyRequest) => services.identity.authenticateBearer(anthropic(request) ? apiKeyOrBearer(request.headers) : request.headers.authorization, { ip: request.ip });

  // Only the ids the payer's package may use (config `plans.<id>.models`; default all).
  app.get('/v1/models', async (request) => {
    const principal = await principalOf(request);
    const ids = services.entitlements.of(principal.payer.package).modelIds;
    if (!anthropic(request)) return { object: 'list', data: ids.map((id) => modelObject(services.models.get(id)!)) };
    return { data: ids.map(anthropicModel), has_more: false, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null };
  });

  app.get<{ Params: { id: string } }>('/v1/models/:id', async (request) => {
    const principal = await principalOf(request);
    const asked = request.params.id;
    const id = anthropic(request) ? services.chatSurface.resolveModel(asked).id : asked;
    const model = services.entitlements.allows(principal.payer.package, id) ? services.models.get(id) : undefined;
    if (!model) {
      const message = bilingual('The model {id} does not exist; GET /v1/models lists the ids.', '模型 {id} 不存在；GET /v1/models 会列出可用的模型 ID。', { id: asked });
      throw new AppError('model_not_found', message, { param: 'model' });
    }
    return anthropic(request) ? anthropicModel(model.id) : modelObject(model);
  });
}

/** Whether the caller speaks the Anthropic API (its SDKs always send `anthropic-version`). */
function anthropic(request: FastifyRequest): boolean {
  return typeof request.headers['anthropic-version'] === 'string';
}

function modelObject(model: ProductModel) {
  const limits = model.kind === 'embedding' ? { context_length: model.contextLength } : { context_length: model.contextLength, max_output_tokens: model.maxOutputTokens };
  return { id: model.id, object: 'model', created: catalogueCreated, owned_by: 'svc', ...limits };
}

function anthropicModel(id: string) {
  return { type: 'model', id, display_name: id, created_at: catalogueCreatedAt };
}
