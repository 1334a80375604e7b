/** `POST /v1/embeddings` (the embedding executor over the metering pipeline), for a bearer API key or session token. */
import type { FastifyInstance } from 'fastify';

export const embeddingsPath = '/v1/embeddings';

export async function embeddingRoutes(app: FastifyInstance): Promise<void> {
  const { pipeline, embeddings, chatSurface } = app.services;
  // The per-IP limit is charged by admission (see http/guards.ts).
  app.post(embeddingsPath, { config: { ipLimit: false } }, (request, reply) =>
    pipeline.serve(request, reply, (principal) =>
      embeddings.plan(request.body, { resolve: (model) => chatSurface.resolveModel(model).id, unknownModel: (model) => pipeline.modelNotFound(principal, model) }),
    ),
  );
}
