/**
 * Cards through Stripe Checkout, with the official `stripe` package (its API host comes from
 * `payments.stripe.apiBase`, so tests talk to a local fake). A one-off `mode: payment` session buys one
 * month; every outbound call that creates something carries our idempotency key, derived from our own
 * ids so a retry can never charge or refund twice. Webhooks are verified exactly as `constructEvent` does —
 * HMAC-SHA256 of `t.rawBody` under the endpoint secret, 300 s tolerance — on the raw bytes.
 */
import type Stripe from 'stripe';
import type { StripeSettings } from '../../../config/payments.ts';
import {
  header,
  NotificationError,
  ProviderCallError,
  type CheckoutOptions,
  type NotificationAck,
  type ParsedNotification,
  type PaymentNotice,
  type PaymentProvider,
  type PaymentStart,
  type ProviderOrder,
  type RawNotification,
  type RefundNotice,
  type RefundRequest,
  type RefundResult,
  type RefundStatus,
} from './provider.ts';

export const stripeToleranceSeconds = 300;

/** The SDK (~3 MB of heap once loaded) loads at the first call, so a server without Stripe never holds it. */
let sdk: Promise<typeof Stripe> | undefined;
const stripeSdk = () => (sdk ??= import('stripe').then((module) => module.default));

/** The parts of a Checkout Session we read (webhook payloads are not typed by the SDK's resources). */
interface SessionFields {
  id?: string;
  object?: string;
  client_reference_id?: string | null;
  amount_total?: number | null;
  currency?: string | null;
  payment_status?: string;
  status?: string | null;
  payment_intent?: string | { id: string } | null;
}

export class StripeProvider implements PaymentProvider {
  readonly id = 'stripe' as const;
  readonly currencies = null;
  readonly appId = null;
  readonly merchantId = null;
  readonly #settings: StripeSettings;
  #client: Promise<Stripe> | undefined;
  readonly #webhookSecret: string;

  constructor(settings: StripeSettings) {
    this.#settings = settings;
    this.#webhookSecret = settings.webhookSecret;
  }

  #api(): Promise<Stripe> {
    return (this.#client ??= stripeSdk().then((Sdk) => {
      const base = new URL(this.#settings.apiBase);
      const protocol = base.protocol === 'http:' ? 'http' : 'https';
      return new Sdk(this.#settings.secretKey, {
        host: base.hostname,
        port: base.port || (protocol === 'http' ? 80 : 443),
        protocol,
        maxNetworkRetries: 2,
        timeout: 20_000,
        telemetry: false,
      });
    }));
  }

  async createPayment(order: ProviderOrder, options: CheckoutOptions): Promise<PaymentStart> {
    let session: Stripe.Checkout.Session;
    try {
      session = await (await this.#api()).checkout.sessions.create(
        {
          mode: 'payment',
          client_reference_id: order.id,
          metadata: { order_id: order.id },
          payment_intent_data: { metadata: { order_id: order.id } },
          line_items: [
            {
              quantity: 1,
              price_data: { currency: order.currency.toLowerCase(), unit_amount: order.amountMinor, product_data: { name: order.description } },
            },
          ],
          success_url: options.returnUrl,
          cancel_url: options.returnUrl,
          // Stripe refuses payment after our order expires, so a late payment cannot happen.
          expires_at: Math.floor(order.expiresAt.getTime() / 1000),
        },
        { idempotencyKey: `svc-checkout-${order.id}` },
      );
    } catch (error) {
      throw new ProviderCallError(`checkout session: ${(error as Error).message}`, { cause: error });
    }
    if (!session.url) throw new ProviderCallError('checkout session has no url');
    return { payUrl: session.url, providerTradeNo: session.id };
  }

  async parseNotification(request: RawNotification): Promise<ParsedNotification> {
    const signature = header(request.headers, 'stripe-signature');
    if (!signature) throw new NotificationError('malformed', 'Stripe-Signature is missing');
    const { webhooks } = await stripeSdk();
    let event: Stripe.Event;
    try {
      event = webhooks.constructEvent(
        request.body,
        signature,
        this.#webhookSecret,
        stripeToleranceSeconds,
        undefined,
        request.receivedAt,
      );
    } catch (error) {
      const message = (error as Error).message;
      if (/tolerance/i.test(message)) throw new NotificationError('stale_timestamp', 'Stripe-Signature timestamp is outside the 300 s tolerance', { cause: error });
      if (error instanceof SyntaxError) throw new NotificationError('malformed', 'the body is not JSON', { cause: error });
      throw new NotificationError('bad_signature', 'Stripe-Signature does not verify with the webhook secret', { cause: error });
    }
    const session = (event.data?.object ?? {}) as SessionFields;
    const status = eventStatus(event.type, session);
    if (status === null || session.object !== 'checkout.session') {
      return { kind: 'ignored', eventId: event.id, reason: `event ${event.type} changes no order`, raw: event };
    }
    return { kind: 'notice', notice: sessionNotice(session, status, event.id, 'notify', event) };
  }

  async query(order: ProviderOrder): Promise<PaymentNotice | null> {
    if (!order.providerTradeNo) return null;
    let session: Stripe.Checkout.Session;
    try {
      session = await (await this.#api()).checkout.sessions.retrieve(order.providerTradeNo);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return null;
      throw new ProviderCallError(`retrieve session: ${(error as Error).message}`, { cause: error });
    }
    const fields = session as unknown as SessionFields;
    const status = fields.payment_status === 'paid' || fields.payment_status === 'no_payment_required'
      ? 'paid'
      : fields.status === 'expired'
        ? 'failed'
        : 'pending';
    return sessionNotice(fields, status, `query:${session.id}:${fields.status ?? ''}:${fields.payment_status ?? ''}`, 'query', session);
  }

  async close(order: ProviderOrder): Promise<void> {
    if (!order.providerTradeNo) return;
    try {
      await (await this.#api()).checkout.sessions.expire(order.providerTradeNo);
    } catch (error) {
      // An already expired session is closed; anything else (e.g. it completed meanwhile) is not.
      const current = await (await this.#api()).checkout.sessions.retrieve(order.providerTradeNo).catch(() => null);
      if (current?.status === 'expired') return;
      throw new ProviderCallError(`expire session: ${(error as Error).message}`, { cause: error });
    }
  }

  async refund(order: ProviderOrder, refund: RefundRequest): Promise<RefundResult> {
    if (!order.providerTradeNo) throw new ProviderCallError('the order has no checkout session');
    try {
      const session = await (await this.#api()).checkout.sessions.retrieve(order.providerTradeNo);
      const intent = typeof session.payment_intent === 'string' ? session.payment_intent : session.payment_intent?.id;
      if (!intent) throw new ProviderCallError('the checkout session has no payment intent');
      const result = await (await this.#api()).refunds.create(
        { payment_intent: intent, amount: refund.amountMinor, metadata: { order_id: order.id, reason: refund.reason.slice(0, 500) } },
        { idempotencyKey: `svc-refund-${refund.refundId}` },
      );
      return { providerRefundId: result.id, status: refundStatus(result.status), providerStatus: result.status ?? '' };
    } catch (error) {
      if (error instanceof ProviderCallError) throw error;
      throw new ProviderCallError(`refund: ${(error as Error).message}`, { cause: error });
    }
  }

  /** A pending refund (some payment methods settle refunds later) asked about by its Stripe id. */
  async queryRefund(order: ProviderOrder, refund: { refundId: string; providerRefundId: string | null }): Promise<RefundNotice | null> {
    if (!refund.providerRefundId) return null;
    let found: Stripe.Refund;
    try {
      found = await (await this.#api()).refunds.retrieve(refund.providerRefundId);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return null;
      throw new ProviderCallError(`retrieve refund: ${(error as Error).message}`, { cause: error });
    }
    if (found.metadata?.order_id !== order.id) throw new ProviderCallError('refund query answered about another order');
    return {
      provider: 'stripe',
      orderId: order.id,
      refundId: refund.refundId,
      providerRefundId: found.id,
      amountMinor: found.amount,
      merchantId: null,
      status: refundStatus(found.status),
      providerStatus: found.status ?? '',
      eventId: `query-refund:${found.id}:${found.status ?? ''}`,
      source: 'query',
      raw: found,
    };
  }

  ackSuccess(): NotificationAck {
    return { status: 200, contentType: 'application/json', body: '{"received":true}' };
  }

  ackFailure(kind: 'rejected' | 'error'): NotificationAck {
    return kind === 'rejected'
      ? { status: 400, contentType: 'application/json', body: '{"error":"signature verification failed"}' }
      : { status: 500, contentType: 'application/json', body: '{"error":"temporarily unable to process"}' };
  }
}

function refundStatus(status: string | null | undefined): RefundStatus {
  return status === 'succeeded' ? 'succeeded' : status === 'failed' || status === 'canceled' ? 'failed' : 'pending';
}

function eventStatus(type: string, session: SessionFields): PaymentNotice['status'] | null {
  switch (type) {
    case 'checkout.session.completed':
      // Delayed methods complete the session unpaid and settle later (async_payment_succeeded).
      return session.payment_status === 'paid' || session.payment_status === 'no_payment_required' ? 'paid' : 'pending';
    case 'checkout.session.async_payment_succeeded':
      return 'paid';
    case 'checkout.session.async_payment_failed':
    case 'checkout.session.expired':
      return 'failed';
    default:
      return null;
  }
}

function sessionNotice(session: SessionFields, status: PaymentNotice['status'], eventId: string, source: 'notify' | 'query', raw: unknown): PaymentNotice {
  if (!session.id || !session.client_reference_id || !Number.isSafeInteger(session.amount_total) || !session.currency) {
    throw new NotificationError('malformed', 'the checkout session lacks id, client_reference_id, amount_total or currency');
  }
  return {
    provider: 'stripe',
    orderId: session.client_reference_id,
    providerTradeNo: session.id,
    amountMinor: session.amount_total as number,
    currency: session.currency.toUpperCase(),
    appId: null,
    merchantId: null,
    status,
    eventId,
    source,
    raw,
  };
}
