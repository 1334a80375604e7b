/**
 * `GET /v1/models` and `GET /v1/models/{id}` in the OpenAI list shape, for an authenticated caller
 * (bearer API key or session token): only the ids the caller's plan may use.
 */
import type { FastifyInstance } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';

/** `created` of every catalogue entry: when this catalogue was first published (2026-11-21T00:00:00Z). */
const catalogueCreated = 1_795_219_200;

export async function modelRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;

  // Only the ids the payer's package may use (config `plans.<id>.models`; default all).
  app.get('/v1/models', async (request) => {
    const principal = await services.identity.authenticateBearer(request.headers.authorization, { ip: request.ip });
    return { object: 'list', data: services.entitlements.of(principal.payer.package).modelIds.map(modelObject) };
  });

  app.get<{ Params: { id: string } }>('/v1/models/:id', async (request) => {
    const principal = await services.identity.authenticateBearer(request.headers.authorization, { ip: request.ip });
    const model = services.entitlements.allows(principal.payer.package, request.params.id) ? services.models.get(request.params.id) : undefined;
    if (!model) {
      const message = bilingual('The model {id} does not exist; GET /v1/models lists the ids.', '模型 {id} 不存在；GET /v1/models 会列出可用的模型 ID。', { id: request.params.id });
      throw new AppError('model_not_found', message, { param: 'model' });
    }
    return modelObject(model.id);
  });
}

function modelObject(id: string) {
  return { id, object: 'model', created: catalogueCreated, owned_by: 'svc' };
}
