/**
 * The metered text endpoints, each a surface over the one metering pipeline: `POST /v1/chat/completions`
 * (the chat surface), `POST /v1/responses` (the Responses API), `POST /v1/completions` (legacy text
 * completions) and `POST /v1/messages` (the Anthropic Messages API), the last three re-framing the same chat
 * executor's work. `POST /v1/messages/count_tokens` counts a Messages request's prompt, unmetered;
 * `GET|DELETE /v1/responses/{id}` and `GET /v1/responses/{id}/input_items` read back and forget kept responses.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { apiKeyOrBearer } from '../../http/credential.ts';
import type { HttpReply, HttpRequest } from '../../metering/executor.ts';
import type { MeteringPipeline } from '../../metering/pipeline.ts';
import type { ChatSurface } from './chat.surface.ts';
import type { MessagesSurface } from './messages.surface.ts';
import type { ResponsesSurface } from './responses.surface.ts';

export const chatCompletionsPath = '/v1/chat/completions';
export const responsesPath = '/v1/responses';
export const completionsPath = '/v1/completions';
export const messagesPath = '/v1/messages';

/** The hot paths, which run without an ORM unit of work (`app.ts`). */
export function isMeteredPath(url: string): boolean {
  return url.startsWith(chatCompletionsPath) || url.startsWith(responsesPath) || url.startsWith(completionsPath) || url.startsWith(messagesPath);
}

export async function gatewayRoutes(app: FastifyInstance): Promise<void> {
  const { pipeline, chatSurface, responsesSurface, completionsSurface, messagesSurface, identity } = app.services;
  // The per-IP limit is charged by admission, in the same atomic step as the rest (see http/guards.ts).
  const metered = { config: { ipLimit: false as const } };
  app.post(chatCompletionsPath, metered, chatHandler(pipeline, chatSurface));
  app.post(responsesPath, metered, responsesHandler(pipeline, responsesSurface));
  // Kept responses, read back by their payer: the same JSON as the reply, its input items, and forgetting it.
  const payer = (request: FastifyRequest) => identity.authenticateBearer(request.headers.authorization, { ip: request.ip });
  app.get<{ Params: { id: string } }>(`${responsesPath}/:id`, async (request, reply) => {
    const json = await responsesSurface.retrieve(await payer(request), request.params.id, request.query);
    return reply.type('application/json').send(json);
  });
  app.delete<{ Params: { id: string } }>(`${responsesPath}/:id`, async (request) => responsesSurface.delete(await payer(request), request.params.id));
  app.get<{ Params: { id: string } }>(`${responsesPath}/:id/input_items`, async (request) => responsesSurface.inputItems(await payer(request), request.params.id, request.query));
  app.post(completionsPath, metered, (request, reply) => pipeline.serve(request, reply, (principal) => completionsSurface.plan(request, principal, reply.raw)));
  app.post(messagesPath, metered, messagesHandler(pipeline, messagesSurface));
  app.post(`${messagesPath}/count_tokens`, async (request) => {
    const principal = await identity.authenticateBearer(apiKeyOrBearer(request.headers), { ip: request.ip });
    return messagesSurface.countTokens(request.body, principal);
  });
}

/** `POST /v1/chat/completions`, for Fastify's route and for the chat lane that serves its plain requests (`http/chat-lane.ts`). */
export function chatHandler(pipeline: MeteringPipeline, surface: ChatSurface): (request: HttpRequest, reply: HttpReply) => Promise<void> {
  return (request, reply) => pipeline.serve(request, reply, (principal) => surface.plan(request, principal, reply.raw));
}

/** `POST /v1/responses`, for Fastify's route and the lane. */
export function responsesHandler(pipeline: MeteringPipeline, surface: ResponsesSurface): (request: HttpRequest, reply: HttpReply) => Promise<void> {
  return (request, reply) => pipeline.serve(request, reply, (principal) => surface.plan(request, principal, reply.raw));
}

/** `POST /v1/messages`, for Fastify's route and the lane: the key may come as `x-api-key`, as Anthropic's clients send it. */
export function messagesHandler(pipeline: MeteringPipeline, surface: MessagesSurface): (request: HttpRequest, reply: HttpReply) => Promise<void> {
  return (request, reply) => pipeline.serve(request, reply, (principal) => surface.plan(request, principal, reply.raw), { authorization: apiKeyOrBearer(request.headers) });
}
