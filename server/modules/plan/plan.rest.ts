import type { FastifyInstance } from 'fastify';

/** `GET /api/membership/plans`: the same catalogue as GraphQL `plans`, plus currency and promotion. */
export async function planRoutes(app: FastifyInstance): Promise<void> {
  app.get('/api/membership/plans', async () => ({
    ok: true,
    currency: app.services.config.currency,
    promotion: app.services.models.promotion(),
    plans: app.services.plans.list(),
  }));
}
