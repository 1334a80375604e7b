/**
 * `POST /v1/audio/speech` (svc-tts and svc-music over the metering pipeline) and `GET /v1/audio/voices`
 * (the preset voices of svc-tts), for a bearer API key or session token.
 */
import type { FastifyInstance } from 'fastify';
import { listVoices } from './speech/speech.voices.ts';

export const speechPath = '/v1/audio/speech';

export async function speechRoutes(app: FastifyInstance): Promise<void> {
  const { pipeline, speech, identity } = app.services;

  // The per-IP limit is charged by admission (see http/guards.ts).
  app.post(speechPath, { config: { ipLimit: false } }, (request, reply) => pipeline.serve(request, reply, (principal) => speech.plan(request.body, (id) => pipeline.modelNotFound(principal, id))));

  app.get('/v1/audio/voices', async (request) => {
    await identity.authenticateBearer(request.headers.authorization, { ip: request.ip });
    return { object: 'list', data: listVoices().map((voice) => ({ object: 'voice', ...voice })) };
  });
}
