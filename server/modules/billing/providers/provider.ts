/**
 * One interface for every payment provider (DESIGN §8.6). A provider turns an order into something the
 * payer can act on (a redirect or a QR code), turns a notification — the raw HTTP request, since every
 * signature covers the exact bytes — into a verified, normalised notice, answers "what happened to this
 * order?" for reconciliation, refunds, and knows how its own servers expect to be acknowledged.
 * Verification failures are `NotificationError`s with a typed reason; nothing unverified ever becomes a
 * `PaymentNotice`.
 */

export const paymentProviderIds = ['alipay', 'wechat', 'stripe', 'sandbox'] as const;
export type PaymentProviderId = (typeof paymentProviderIds)[number];

export function isPaymentProviderId(value: string): value is PaymentProviderId {
  return (paymentProviderIds as readonly string[]).includes(value);
}

/** A notification exactly as it arrived. `body` must be the raw bytes, not a re-serialised parse. */
export interface RawNotification {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** When it arrived (ms since epoch); timestamp windows are judged against it. Default: now. */
  receivedAt?: number;
}

export type NoticeStatus = 'paid' | 'failed' | 'pending';

/** A verified statement by a provider about one order. Amounts are integer minor units. */
export interface PaymentNotice {
  provider: PaymentProviderId;
  /** Our order id, which is the `out_trade_no` (Alipay, WeChat Pay) or `client_reference_id` (Stripe). */
  orderId: string;
  /** The provider's id of the payment: Alipay `trade_no`, WeChat `transaction_id`, Stripe session id. */
  providerTradeNo: string | null;
  amountMinor: number;
  currency: string;
  /** The application the payment was made to: Alipay `app_id`, WeChat `appid`; null where there is none. */
  appId: string | null;
  /** The merchant that was paid: Alipay `seller_id`, WeChat `mchid`; null where there is none. */
  merchantId: string | null;
  status: NoticeStatus;
  /** The provider's id of this notification (Alipay `notify_id`, WeChat and Stripe event ids); `query:…` for query results. */
  eventId: string;
  /** `notify`: pushed by the provider; `query`: our own reconciliation asked for it. */
  source: 'notify' | 'query';
  /** The verified payload (for WeChat Pay, the decrypted resource). */
  raw: unknown;
}

/** Where a refund is at its provider: money returned, given up (WeChat Pay CLOSED / ABNORMAL), or on its way. */
export type RefundStatus = 'succeeded' | 'failed' | 'pending';

/** A verified statement by a provider about one refund of an order. Amounts are integer minor units. */
export interface RefundNotice {
  provider: PaymentProviderId;
  /** Our order id (`out_trade_no`). */
  orderId: string;
  /** Our id of the refund (WeChat `out_refund_no`): `<order id>R<attempt>`. */
  refundId: string;
  providerRefundId: string | null;
  /** How much it returns. */
  amountMinor: number;
  /** The merchant that refunds: WeChat `mchid`; null where the answer carries none. */
  merchantId: string | null;
  status: RefundStatus;
  /** The provider's own word for the state (SUCCESS, CLOSED, ABNORMAL, PROCESSING, …). */
  providerStatus: string;
  /** The provider's id of this notification; `query-refund:…` for query results. */
  eventId: string;
  source: 'notify' | 'query';
  raw: unknown;
}

/** What a verified notification said. Events that concern no order (other Stripe events) are `ignored`. */
export type ParsedNotification =
  | { kind: 'notice'; notice: PaymentNotice }
  | { kind: 'refund'; refund: RefundNotice }
  | { kind: 'ignored'; eventId: string; reason: string; raw: unknown };

export const verificationFailures = [
  /** The body or headers are not what the provider sends (bad form, bad JSON, a field missing). */
  'malformed',
  /** Signed with an algorithm we do not accept (e.g. Alipay `RSA` = SHA-1). */
  'unsupported_algorithm',
  /** WeChat Pay: `Wechatpay-Serial` names no platform key or certificate we have. */
  'unknown_key',
  'bad_signature',
  /** Signed, but outside the accepted time window (WeChat Pay 5 min, Stripe 300 s). */
  'stale_timestamp',
  /** WeChat Pay: the `resource` did not decrypt or authenticate with the APIv3 key. */
  'decrypt_failed',
] as const;
export type VerificationFailure = (typeof verificationFailures)[number];

export class NotificationError extends Error {
  override name = 'NotificationError';
  readonly reason: VerificationFailure;

  constructor(reason: VerificationFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}

/** What to answer a notification with, in the provider's own format. */
export interface NotificationAck {
  status: number;
  contentType: string | null;
  body: string;
}

/** An order as a provider needs to see it. */
export interface ProviderOrder {
  id: string;
  amountMinor: number;
  currency: string;
  /** Shown to the payer (e.g. "svc Pro — 1 month"). */
  description: string;
  createdAt: Date;
  expiresAt: Date;
  /** Known after checkout for providers that assign it at once (Stripe's session id). */
  providerTradeNo: string | null;
}

export interface CheckoutOptions {
  /** Alipay: `desktop` → alipay.trade.page.pay, `mobile` → alipay.trade.wap.pay. */
  device?: 'desktop' | 'mobile';
  /** Where the payer's browser returns after paying (or cancelling). */
  returnUrl: string;
}

export interface PaymentStart {
  /** Send the payer's browser here. */
  payUrl?: string;
  /** Draw this text as a QR code (WeChat Pay `code_url`). */
  qrCode?: string;
  /** The provider's id of the payment when it is known at once (Stripe Checkout Session id). */
  providerTradeNo?: string;
}

export interface RefundRequest {
  /** Our id of the refund, unique per refund and stable across retries (the provider's idempotency key). */
  refundId: string;
  amountMinor: number;
  reason: string;
}

export interface RefundResult {
  /** The provider's id of the refund, when it gives one. */
  providerRefundId: string | null;
  /**
   * `pending`: accepted, money still on its way (WeChat Pay `PROCESSING`): the order stays
   * `refund_pending` until a notice or a query says `succeeded`. `failed`: the provider gave this refund up
   * (WeChat Pay `CLOSED` / `ABNORMAL`); a new attempt needs a new refund id.
   */
  status: RefundStatus;
  /** The provider's own word for the state, when it is not plain success. */
  providerStatus?: string;
}

export interface PaymentProvider {
  readonly id: PaymentProviderId;
  /** Currencies this provider charges in; `null` = any currency the package has a price in. */
  readonly currencies: readonly string[] | null;
  /** The application / merchant ids notices must carry; bound to each order when it is created. */
  readonly appId: string | null;
  readonly merchantId: string | null;
  createPayment(order: ProviderOrder, options: CheckoutOptions): Promise<PaymentStart>;
  /** Verifies and parses a notification; throws `NotificationError` when it cannot be trusted. */
  parseNotification(request: RawNotification): Promise<ParsedNotification>;
  /** Asks the provider about an order: a notice (`source: 'query'`), or null if it knows no such payment yet. */
  query(order: ProviderOrder): Promise<PaymentNotice | null>;
  /** Makes an unpaid order unpayable at the provider before it expires here. */
  close(order: ProviderOrder): Promise<void>;
  refund(order: ProviderOrder, refund: RefundRequest): Promise<RefundResult>;
  /**
   * Asks where a refund is (providers whose refunds can be `pending`): a notice (`source: 'query'`), or null
   * if the provider knows no such refund.
   */
  queryRefund?(order: ProviderOrder, refund: { refundId: string; providerRefundId: string | null }): Promise<RefundNotice | null>;
  /** The answer after the notice was stored and committed. */
  ackSuccess(): NotificationAck;
  /** The answer when it was not verified (`rejected`) or could not be stored (`error`): the provider retries. */
  ackFailure(kind: 'rejected' | 'error'): NotificationAck;
}

/** A provider call that failed (network, HTTP error, a signature on the response that does not verify). */
export class ProviderCallError extends Error {
  override name = 'ProviderCallError';
}

export function header(headers: RawNotification['headers'], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
