/**
 * `GET /v1/schemas/svc.search.v1.json`: the JSON Schema of hosted search output, public (no credential)
 * so clients and tools can fetch it to validate `web_search` results.
 */
import type { FastifyInstance } from 'fastify';
import { svcSearchV1Path, svcSearchV1SchemaAt } from './search.output.ts';

export async function searchRoutes(app: FastifyInstance): Promise<void> {
  const body = JSON.stringify(svcSearchV1SchemaAt(app.services.config.server.baseUrl), null, 2);
  app.get(svcSearchV1Path, async (_request, reply) =>
    reply
      .header('content-type', 'application/schema+json; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      // A public document: browser-based tools (schema viewers, playgrounds) may read it from any origin.
      .header('access-control-allow-origin', '*')
      .send(body),
  );
}
