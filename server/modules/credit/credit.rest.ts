/**
 * Prepaid credit over REST (issue 51 item 4): the member's balance and entries, the pay-from-credit
 * opt-in, buying credit through the checkout, redeeming a code; staff's code batches and their CSV. The
 * routes parse and call the same `services.credits` methods as GraphQL.
 */
import type { FastifyInstance } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { objectBody } from '../../http/body.ts';
import { route } from '../../http/route-access.ts';
import { checkoutJson, optionalString } from '../billing/billing.rest.ts';

export async function creditRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  const base = '/api/membership/credits';

  // `organisationId` (query or body): an organisation the caller owns or administers, instead of their own account.
  app.get<{ Querystring: { organisationId?: string } }>(base, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => ({
    ok: true,
    credit: await services.credits.summary(request.principal, request.query.organisationId ?? null),
  }));

  app.get<{ Querystring: { first?: string; after?: string; organisationId?: string } }>(`${base}/entries`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const { first, after, organisationId } = request.query;
    const page = await services.credits.entries(request.principal, { first: first === undefined ? null : Number(first), after: after ?? null }, organisationId ?? null);
    return { ok: true, entries: page.entries, nextCursor: page.nextCursor };
  });

  app.post(`${base}/settings`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const body = objectBody(request);
    const on = body.payFromCredit;
    if (typeof on !== 'boolean') throw new AppError('invalid_request', bilingual('payFromCredit must be true or false.', 'payFromCredit 必须是 true 或 false。'), { param: 'payFromCredit' });
    return { ok: true, credit: await services.credits.setPayFromCredit(request.principal, on, optionalString(body, 'organisationId')) };
  });

  app.post(`${base}/buy`, route({ auth: 'signed-in', cache: 'no-store' }), async (request, reply) => {
    const body = objectBody(request);
    const device = body.device;
    if (device !== undefined && device !== null && device !== 'desktop' && device !== 'mobile') {
      throw new AppError('invalid_request', bilingual('device must be desktop or mobile.', 'device 必须是 desktop 或 mobile。'), { param: 'device' });
    }
    const amount = body.amount;
    if (typeof amount !== 'string' && typeof amount !== 'number') throw new AppError('invalid_request', bilingual('amount is required, e.g. "10".', 'amount 为必填项，例如 "10"。'), { param: 'amount' });
    const checkout = await services.credits.buy(request.principal, { amount, provider: String(body.provider ?? ''), device: device ?? null, organisationId: optionalString(body, 'organisationId') }, { requestId: request.id });
    return reply.code(201).send(checkoutJson(checkout));
  });

  app.post(`${base}/redeem`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const { entry, summary } = await services.credits.redeem(request.principal, objectBody(request).code, { ip: request.ip, requestId: request.id });
    return { ok: true, entry, credit: summary };
  });

  // Staff (admins): code batches.
  app.get<{ Querystring: { first?: string } }>(`${base}/code-batches`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    return { ok: true, batches: await services.credits.batches(request.principal, request.query.first === undefined ? 50 : Number(request.query.first)) };
  });

  app.post(`${base}/code-batches`, route({ auth: 'signed-in', cache: 'no-store' }), async (request, reply) => {
    const body = objectBody(request);
    const minted = await services.credits.mint(
      request.principal,
      {
        value: body.value as string,
        currency: typeof body.currency === 'string' ? body.currency : null,
        count: Number(body.count),
        usesPerCode: body.usesPerCode === undefined || body.usesPerCode === null ? null : Number(body.usesPerCode),
        expiresAt: typeof body.expiresAt === 'string' ? body.expiresAt : null,
        note: typeof body.note === 'string' ? body.note : null,
      },
      { requestId: request.id },
    );
    return reply.code(201).send({ ok: true, batch: minted.batch, codes: minted.codes });
  });

  app.get<{ Params: { id: string } }>(`${base}/code-batches/:id/codes.csv`, route({ auth: 'signed-in', cache: 'no-store' }), async (request, reply) => {
    const csv = await services.credits.batchCsv(request.principal, request.params.id);
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="credit-codes-${request.params.id}.csv"`)
      .send(csv);
  });
}
