import type { FastifyInstance } from 'fastify';
import { route } from '../../http/route-access.ts';

/**
 * `POST /api/membership/v1/quote {endpoint, body}` (also without `/v1`, as every membership route): what `body`
 * sent to `endpoint` (chat.completions, messages, responses) would reserve and cost at most, without sending it
 * (same as GraphQL `quote`).
 */
export async function quoteRoutes(app: FastifyInstance): Promise<void> {
  app.post<{ Body: { endpoint?: unknown; body?: unknown } }>('/api/membership/quote', route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const input = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as { endpoint?: unknown; body?: unknown };
    const quote = await app.services.quotes.quote(request.principal, input.endpoint, input.body, request.ip);
    return { ok: true, quote };
  });
}
