/** `POST /v1/chat/completions`: the chat surface over the metering pipeline. */
import type { FastifyInstance } from 'fastify';

export const chatCompletionsPath = '/v1/chat/completions';

export async function gatewayRoutes(app: FastifyInstance): Promise<void> {
  const { pipeline, chatSurface } = app.services;
  // The per-IP limit is charged by admission, in the same atomic step as the rest (see http/guards.ts).
  app.post(chatCompletionsPath, { config: { ipLimit: false } }, (request, reply) => pipeline.serve(request, reply, (principal) => chatSurface.plan(request, principal)));
}
