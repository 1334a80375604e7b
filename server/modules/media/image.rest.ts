/** `POST /v1/images/generations` (the OpenAI Images API: svc-img over the metering pipeline), for a bearer API key or session token. */
import type { FastifyInstance } from 'fastify';

export const imagesPath = '/v1/images/generations';

export async function imageRoutes(app: FastifyInstance): Promise<void> {
  const { pipeline, images } = app.services;
  // The per-IP limit is charged by admission (see http/guards.ts).
  app.post(imagesPath, { config: { ipLimit: false } }, (request, reply) => pipeline.serve(request, reply, (principal) => images.planFromImagesApi(request.body, (id) => pipeline.modelNotFound(principal, id))));
}
