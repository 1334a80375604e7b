/**
 * The metered text endpoints, each a surface over the one metering pipeline: `POST /v1/chat/completions`
 * (the chat surface), `POST /v1/responses` (the Responses API) and `POST /v1/completions` (legacy text
 * completions), the last two re-framing the same chat executor's work.
 */
import type { FastifyInstance } from 'fastify';
import type { HttpReply, HttpRequest } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import type { ChatSurface } from './chat.surface.ts';

export const chatCompletionsPath = '/v1/chat/completions';
export const responsesPath = '/v1/responses';
export const completionsPath = '/v1/completions';

/** The hot paths, which run without an ORM unit of work (`app.ts`). */
export function isMeteredPath(url: string): boolean {
  return url.startsWith(chatCompletionsPath) || url.startsWith(responsesPath) || url.startsWith(completionsPath);
}

export async function gatewayRoutes(app: FastifyInstance): Promise<void> {
  const { pipeline, chatSurface, responsesSurface, completionsSurface } = app.services;
  // The per-IP limit is charged by admission, in the same atomic step as the rest (see http/guards.ts).
  const metered = { config: { ipLimit: false as const } };
  app.post(chatCompletionsPath, metered, chatHandler(pipeline, chatSurface));
  app.post(responsesPath, metered, (request, reply) => pipeline.serve(request, reply, (principal) => responsesSurface.plan(request, principal)));
  app.post(completionsPath, metered, (request, reply) => pipeline.serve(request, reply, (principal) => completionsSurface.plan(request, principal)));
}

/** `POST /v1/chat/completions`, for Fastify's route and for the chat lane that serves its plain requests (`http/chat-lane.ts`). */
export function chatHandler(pipeline: MeteringPipeline, surface: ChatSurface): (request: HttpRequest, reply: HttpReply) => Promise<void> {
  return (request, reply) => pipeline.serve(request, reply, (principal) => surface.plan(request, principal));
}
