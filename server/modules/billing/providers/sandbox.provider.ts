/**
 * The sandbox: a provider without money, for trying svc out and for tests. Its pay page (a later step)
 * pays or fails an order with one click by asking `signNotice` for a notice and posting it to the notify
 * route like any provider would. Notices are HMAC-SHA256-signed with a secret drawn at start, so they
 * cannot be forged from outside either — and since the secret is per process, a notice signed by one
 * instance only verifies on that instance (the sandbox is for single-instance trials).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  header,
  NotificationError,
  type CheckoutOptions,
  type NotificationAck,
  type ParsedNotification,
  type PaymentNotice,
  type PaymentProvider,
  type PaymentStart,
  type ProviderOrder,
  type RawNotification,
  type RefundResult,
} from './provider.ts';

export const sandboxSignatureHeader = 'x-svc-sandbox-signature';
const toleranceSeconds = 300;

interface SandboxEvent {
  id: string;
  orderId: string;
  status: 'paid' | 'failed';
  amountMinor: number;
  currency: string;
  tradeNo: string;
}

export class SandboxProvider implements PaymentProvider {
  readonly id = 'sandbox' as const;
  readonly currencies = null;
  readonly appId = null;
  readonly merchantId = null;
  readonly #secret = randomBytes(32);
  readonly #webUrl: string;

  constructor(urls: { webUrl: string }) {
    this.#webUrl = urls.webUrl;
  }

  async createPayment(order: ProviderOrder, _options: CheckoutOptions): Promise<PaymentStart> {
    return { payUrl: `${this.#webUrl}/payments/sandbox/${encodeURIComponent(order.id)}` };
  }

  /** A signed notification paying (or failing) `order`, as the sandbox pay page sends it. */
  signNotice(order: Pick<ProviderOrder, 'id' | 'amountMinor' | 'currency'>, status: 'paid' | 'failed', now = Date.now()): RawNotification {
    const event: SandboxEvent = {
      id: `sbx_evt_${randomBytes(12).toString('hex')}`,
      orderId: order.id,
      status,
      amountMinor: order.amountMinor,
      currency: order.currency,
      tradeNo: `sbx_${randomBytes(12).toString('hex')}`,
    };
    const body = Buffer.from(JSON.stringify(event));
    const timestamp = Math.floor(now / 1000);
    return {
      headers: { 'content-type': 'application/json', [sandboxSignatureHeader]: `t=${timestamp},v1=${this.#mac(timestamp, body)}` },
      body,
      receivedAt: now,
    };
  }

  async parseNotification(request: RawNotification): Promise<ParsedNotification> {
    const match = /^t=(\d{1,12}),v1=([0-9a-f]{64})$/.exec(header(request.headers, sandboxSignatureHeader) ?? '');
    if (!match) throw new NotificationError('malformed', `${sandboxSignatureHeader} is missing or malformed`);
    const timestamp = Number(match[1]);
    const expected = Buffer.from(this.#mac(timestamp, request.body), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'))) {
      throw new NotificationError('bad_signature', 'the sandbox signature does not verify');
    }
    if (Math.abs(Math.floor((request.receivedAt ?? Date.now()) / 1000) - timestamp) > toleranceSeconds) {
      throw new NotificationError('stale_timestamp', 'the sandbox notice is older than 300 s');
    }
    let event: SandboxEvent;
    try {
      event = JSON.parse(request.body.toString('utf8')) as SandboxEvent;
    } catch {
      throw new NotificationError('malformed', 'the body is not JSON');
    }
    const notice: PaymentNotice = {
      provider: 'sandbox',
      orderId: event.orderId,
      providerTradeNo: event.tradeNo,
      amountMinor: event.amountMinor,
      currency: event.currency,
      appId: null,
      merchantId: null,
      status: event.status,
      eventId: event.id,
      source: 'notify',
      raw: event,
    };
    return { kind: 'notice', notice };
  }

  /** The sandbox keeps no trades: an order nobody paid or failed just expires. */
  async query(): Promise<PaymentNotice | null> {
    return null;
  }

  async close(): Promise<void> {}

  async refund(): Promise<RefundResult> {
    return { providerRefundId: null, status: 'succeeded' };
  }

  ackSuccess(): NotificationAck {
    return { status: 200, contentType: 'application/json', body: '{"ok":true}' };
  }

  ackFailure(kind: 'rejected' | 'error'): NotificationAck {
    return { status: kind === 'rejected' ? 400 : 500, contentType: 'application/json', body: '{"ok":false}' };
  }

  #mac(timestamp: number, body: Buffer): string {
    return createHmac('sha256', this.#secret).update(`${timestamp}.`).update(body).digest('hex');
  }
}
