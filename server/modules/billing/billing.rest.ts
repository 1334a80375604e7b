/**
 * Payments over REST (DESIGN §8.6): checkout, the member's orders and subscription (or, with
 * `organisationId`, an organisation's, for its owner and admins), the providers'
 * notification callbacks, the sandbox pay page's endpoints (only while the sandbox is on), and staff order
 * lookup, re-query and refund. The routes parse and call the same service methods as GraphQL.
 *
 * The notify routes read the body as raw bytes (their own content-type parser, in their own scope):
 * Alipay signs the form fields as sent, WeChat Pay and Stripe sign the exact body. The provider's ack is
 * sent only after `handleNotification` returned, that is after the notice was committed.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { objectBody } from '../../http/body.ts';
import { route } from '../../http/route-access.ts';
import type { Checkout, OrderView } from './billing.service.ts';
import type { PaymentProviderId } from './providers/provider.ts';

type WithId = { Params: { id: string } };

const notifyProviders: readonly PaymentProviderId[] = ['alipay', 'wechat', 'stripe'];
/** Real notifications are a few KiB. */
const notifyBodyLimit = 256 * 1024;

export async function billingRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  const base = '/api/membership';

  /** The payment providers that are on, and each package's checkout prices per currency (minor units). */
  app.get(`${base}/payments/methods`, async () => ({
    ok: true,
    providers: services.checkout.providers(),
    prices: Object.fromEntries(
      services.plans
        .list()
        .flatMap((plan) => plan.packages)
        .map((pkg) => [pkg.id, Object.fromEntries(services.subscriptions.prices(pkg.id).map((price) => [price.currency, price.amountMinor]))]),
    ),
  }));

  app.get<{ Querystring: { packageId?: string; currency?: string; organisationId?: string } }>(`${base}/checkout/quote`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const quote = await services.checkout.quote(request.principal, request.query.packageId ?? '', request.query.currency ?? '', request.query.organisationId ?? null);
    return { ok: true, quote };
  });

  app.post(`${base}/checkout`, route({ auth: 'signed-in', cache: 'no-store' }), async (request, reply) => {
    const body = objectBody(request);
    const device = body.device;
    if (device !== undefined && device !== null && device !== 'desktop' && device !== 'mobile') {
      throw new AppError('invalid_request', bilingual('device must be desktop or mobile.', 'device 必须是 desktop 或 mobile。'), { param: 'device' });
    }
    const checkout = await services.checkout.checkout(
      request.principal,
      {
        packageId: requiredString(body, 'packageId'),
        provider: requiredString(body, 'provider'),
        currency: requiredString(body, 'currency'),
        device: device ?? null,
        organisationId: optionalString(body, 'organisationId'),
      },
      { requestId: request.id },
    );
    return reply.code(201).send(checkoutJson(checkout));
  });

  app.get<{ Querystring: { first?: string; organisationId?: string } }>(`${base}/orders`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const orders = await services.checkout.orders(request.principal, request.query.first === undefined ? null : Number(request.query.first), request.query.organisationId ?? null);
    return { ok: true, orders: orders.map(memberOrder) };
  });

  app.get<WithId>(`${base}/orders/:id`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const order = await services.checkout.order(request.principal, request.params.id);
    if (!order) throw new AppError('not_found', bilingual('No order {id}.', '没有订单 {id}。', { id: request.params.id }), { param: 'id' });
    return { ok: true, order: memberOrder(order) };
  });

  app.get<{ Querystring: { organisationId?: string } }>(`${base}/subscription`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    return { ok: true, subscription: await services.subscriptions.mine(request.principal, request.query.organisationId ?? null) };
  });

  app.post(`${base}/subscription/cancel`, route({ auth: 'signed-in' }), async (request) => {
    const organisationId = optionalString(objectBody(request), 'organisationId');
    return { ok: true, subscription: await services.subscriptions.cancel(request.principal, { requestId: request.id, organisationId }) };
  });

  app.post(`${base}/subscription/resume`, route({ auth: 'signed-in' }), async (request) => {
    const organisationId = optionalString(objectBody(request), 'organisationId');
    return { ok: true, subscription: await services.subscriptions.resume(request.principal, { requestId: request.id, organisationId }) };
  });

  // Provider callbacks: raw bytes in, the provider's own ack out.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: notifyBodyLimit }, (_request, body, done) => done(null, body));
    scope.post<{ Params: { provider: string } }>(`${base}/payments/:provider/notify`, route({ cache: 'no-store' }), async (request, reply) => {
      const provider = request.params.provider as PaymentProviderId;
      if (!notifyProviders.includes(provider)) {
        throw new AppError('not_found', bilingual('No payment provider {provider}.', '没有支付服务商 {provider}。', { provider: request.params.provider }));
      }
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const handled = await services.billingOrders.handleNotification(provider, { headers: request.headers, body });
      if (handled.result.outcome === 'error') request.log.warn({ err: (handled.result.error as Error)?.message, provider }, 'payment notification could not be processed; the provider will retry');
      return sendAck(reply, handled.ack);
    });
  });

  // The sandbox pay page's endpoints, only while the sandbox is on.
  if (services.paymentProviders.sandbox) {
    app.get<WithId>(`${base}/payments/sandbox/:id`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
      const order = await services.checkout.order(request.principal, request.params.id);
      if (!order || order.provider !== 'sandbox') throw new AppError('not_found', bilingual('No sandbox order {id}.', '没有沙盒订单 {id}。', { id: request.params.id }), { param: 'id' });
      return { ok: true, order: memberOrder(order) };
    });
    for (const [action, outcome] of [
      ['pay', 'paid'],
      ['fail', 'failed'],
    ] as const) {
      app.post<WithId>(`${base}/payments/sandbox/:id/${action}`, route({ auth: 'signed-in' }), async (request) => {
        return { ok: true, order: memberOrder(await services.checkout.sandboxSettle(request.principal, request.params.id, outcome)) };
      });
    }
  }

  // Staff.
  app.get<{ Querystring: { accountId?: string; state?: string; first?: string } }>(`${base}/staff/orders`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const { accountId, state, first } = request.query;
    const orders = await services.checkout.staffOrders(request.principal, { accountId: accountId ?? null, state: state ?? null, first: first === undefined ? null : Number(first) });
    return { ok: true, orders };
  });

  /** One order by id or provider trade number, with its notifications. */
  app.get<WithId>(`${base}/staff/orders/:id`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const order = await services.checkout.staffOrder(request.principal, request.params.id);
    if (!order) throw new AppError('not_found', bilingual('No order {id}.', '没有订单 {id}。', { id: request.params.id }), { param: 'id' });
    const notices = await services.checkout.staffNotices(request.principal, order.id);
    return { ok: true, order: { ...order, notices } };
  });

  app.post<WithId>(`${base}/staff/orders/:id/requery`, route({ auth: 'signed-in' }), async (request) => {
    return { ok: true, ...(await services.checkout.requery(request.principal, request.params.id, { requestId: request.id })) };
  });

  app.post<WithId>(`${base}/staff/orders/:id/refund`, route({ auth: 'signed-in' }), async (request) => {
    const body = objectBody(request);
    return { ok: true, order: await services.checkout.refund(request.principal, request.params.id, { reason: body.reason, requestId: request.id }) };
  });
}

function requiredString(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value.length === 0) {
    throw new AppError('invalid_request', bilingual('{name} is required and must be a string.', '{name} 为必填项，且必须是字符串。', { name }), { param: name });
  }
  return value;
}

/** An optional string field: absent or null → null; anything but a string → 400. */
export function optionalString(body: Record<string, unknown>, name: string): string | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    throw new AppError('invalid_request', bilingual('{name} must be a string.', '{name} 必须是字符串。', { name }), { param: name });
  }
  return value;
}

/** An order as its owner sees it. */
function memberOrder(order: OrderView) {
  return {
    id: order.id,
    state: order.state,
    amount: order.amount,
    amountMinor: order.amountMinor,
    listMinor: order.listMinor,
    creditMinor: order.creditMinor,
    currency: order.currency,
    provider: order.provider,
    packageId: order.packageId,
    /** Set when an organisation pays (its owner or an admin opened the checkout). */
    organisationId: order.organisationId,
    providerTradeNo: order.providerTradeNo,
    payUrl: order.payUrl,
    qrCode: order.qrCode,
    createdAt: order.createdAt,
    expiresAt: order.expiresAt,
    paidAt: order.paidAt,
    closedAt: order.closedAt,
    refundedAt: order.refundedAt,
  };
}

export function checkoutJson(checkout: Checkout) {
  return {
    ok: true,
    order: memberOrder(checkout.order),
    ...(checkout.payUrl ? { payUrl: checkout.payUrl } : {}),
    ...(checkout.qrCode ? { qrCode: checkout.qrCode } : {}),
  };
}

function sendAck(reply: FastifyReply, ack: { status: number; contentType: string | null; body: string }) {
  reply.code(ack.status);
  if (ack.contentType) reply.header('content-type', ack.contentType);
  return ack.body === '' ? reply.send() : reply.send(ack.body);
}
