/**
 * Alipay through the official `alipay-sdk`. Checkout is a signed redirect built locally (desktop
 * `alipay.trade.page.pay`, mobile `alipay.trade.wap.pay`): no server call. The asynchronous notification
 * (CONFORMANCE "Alipay asynchronous notification") is verified RSA2 over every parameter except `sign`
 * and `sign_type`, sorted by name, `k=v` joined by `&`, values URL-decoded exactly once (by the form
 * parser); only `sign_type=RSA2` is accepted, so a SHA-1 `RSA` downgrade is refused. Amounts are yuan
 * with two decimals and become fen without floats. Query, close and refund are OpenAPI 2.0 calls whose
 * responses the SDK verifies with the Alipay public key.
 */
import type { AlipaySdk, AlipaySdkCommonResult, AlipaySdkConfig } from 'alipay-sdk';
import type { AlipaySettings } from '../../../config/payments.ts';
import { formatMinor, parseMinor } from '../../../config/money.ts';
import { loadPrivateKey, loadPublicKey } from './keys.ts';
import {
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
  type RefundRequest,
  type RefundResult,
} from './provider.ts';

const paidStatuses = new Set(['TRADE_SUCCESS', 'TRADE_FINISHED']);

/** The SDK (~4 MB of heap once loaded) loads at the first call, so a server without Alipay never holds it. */
let sdk: Promise<typeof AlipaySdk> | undefined;
const alipaySdk = () => (sdk ??= import('alipay-sdk').then((module) => module.AlipaySdk));

export class AlipayProvider implements PaymentProvider {
  readonly id = 'alipay' as const;
  readonly currencies = ['CNY'] as const;
  readonly appId: string;
  readonly merchantId: string;
  readonly #sdkConfig: AlipaySdkConfig;
  #client: Promise<AlipaySdk> | undefined;
  readonly #notifyUrl: string;

  constructor(settings: AlipaySettings, urls: { notifyUrl: string }) {
    this.appId = settings.appId;
    this.merchantId = settings.sellerId;
    this.#notifyUrl = urls.notifyUrl;
    // The SDK wants one PEM flavour per key type; normalise whatever the operator pasted.
    const privateKey = loadPrivateKey(settings.privateKey, 'payments.alipay.privateKey').export({ type: 'pkcs8', format: 'pem' });
    const alipayPublicKey = loadPublicKey(settings.alipayPublicKey, 'payments.alipay.alipayPublicKey').export({ type: 'spki', format: 'pem' });
    this.#sdkConfig = {
      appId: settings.appId,
      privateKey: String(privateKey).trim(),
      keyType: 'PKCS8',
      alipayPublicKey: String(alipayPublicKey).trim(),
      gateway: settings.gateway,
      signType: 'RSA2',
      camelcase: false,
      timeout: 15_000,
    };
  }

  #sdk(): Promise<AlipaySdk> {
    return (this.#client ??= alipaySdk().then((Sdk) => new Sdk(this.#sdkConfig)));
  }

  async createPayment(order: ProviderOrder, options: CheckoutOptions): Promise<PaymentStart> {
    requireCny(order);
    const mobile = options.device === 'mobile';
    const bizContent: Record<string, string> = {
      out_trade_no: order.id,
      total_amount: formatMinor(order.amountMinor, 'CNY'),
      subject: order.description,
      product_code: mobile ? 'QUICK_WAP_WAY' : 'FAST_INSTANT_TRADE_PAY',
      // Alipay stops accepting payment when our order expires, so a late payment cannot happen.
      time_expire: beijingTime(order.expiresAt),
    };
    if (mobile) bizContent.quit_url = options.returnUrl;
    const payUrl = (await this.#sdk()).pageExecute(mobile ? 'alipay.trade.wap.pay' : 'alipay.trade.page.pay', 'GET', {
      bizContent,
      notifyUrl: this.#notifyUrl,
      returnUrl: options.returnUrl,
    });
    return { payUrl };
  }

  async parseNotification(request: RawNotification): Promise<ParsedNotification> {
    const fields = parseForm(request.body);
    const sign = fields.sign;
    if (!sign) throw new NotificationError('malformed', 'the notification has no sign');
    if (fields.sign_type !== 'RSA2') throw new NotificationError('unsupported_algorithm', `sign_type ${fields.sign_type ?? '(none)'} is not RSA2`);
    const content = Object.keys(fields)
      .filter((key) => key !== 'sign' && key !== 'sign_type')
      .sort()
      .map((key) => `${key}=${fields[key]}`)
      .join('&');
    let verified: boolean;
    try {
      verified = (await this.#sdk()).rsaCheck(content, sign, 'RSA2');
    } catch {
      verified = false;
    }
    if (!verified) throw new NotificationError('bad_signature', 'the RSA2 signature does not verify with the Alipay public key');
    const orderId = fields.out_trade_no;
    const amount = fields.total_amount;
    if (!orderId || amount === undefined || !fields.trade_status) {
      throw new NotificationError('malformed', 'out_trade_no, total_amount or trade_status is missing');
    }
    const amountMinor = parseYuan(amount);
    if (amountMinor === null) throw new NotificationError('malformed', `total_amount ${JSON.stringify(amount)} is not an amount in yuan`);
    const notice: PaymentNotice = {
      provider: 'alipay',
      orderId,
      providerTradeNo: fields.trade_no ?? null,
      amountMinor,
      currency: 'CNY',
      appId: fields.app_id ?? null,
      merchantId: fields.seller_id ?? null,
      status: tradeStatus(fields.trade_status),
      eventId: fields.notify_id ?? `${fields.trade_no ?? orderId}:${fields.trade_status}:${fields.notify_time ?? ''}`,
      source: 'notify',
      raw: fields,
    };
    return { kind: 'notice', notice };
  }

  async query(order: ProviderOrder): Promise<PaymentNotice | null> {
    const result = await this.#call('alipay.trade.query', { out_trade_no: order.id });
    if (result.code !== '10000') {
      if (result.sub_code === 'ACQ.TRADE_NOT_EXIST') return null;
      throw new ProviderCallError(`alipay.trade.query failed: ${result.code} ${result.sub_code ?? ''} ${result.sub_msg ?? result.msg ?? ''}`.trim());
    }
    const amountMinor = parseYuan(String(result.total_amount ?? ''));
    if (amountMinor === null || result.out_trade_no !== order.id) {
      throw new ProviderCallError('alipay.trade.query answered with a different trade or no amount');
    }
    return {
      provider: 'alipay',
      orderId: order.id,
      providerTradeNo: result.trade_no ?? null,
      amountMinor,
      currency: 'CNY',
      // The answer is signed by Alipay for our own signed request: it is about our app and seller.
      appId: this.appId,
      merchantId: this.merchantId,
      status: tradeStatus(String(result.trade_status ?? '')),
      eventId: `query:${result.trade_no ?? order.id}:${result.trade_status ?? ''}`,
      source: 'query',
      raw: result,
    };
  }

  async close(order: ProviderOrder): Promise<void> {
    const result = await this.#call('alipay.trade.close', { out_trade_no: order.id });
    // A trade nobody opened the payment page for does not exist at Alipay: nothing to close.
    if (result.code === '10000' || result.sub_code === 'ACQ.TRADE_NOT_EXIST') return;
    throw new ProviderCallError(`alipay.trade.close failed: ${result.code} ${result.sub_code ?? ''} ${result.sub_msg ?? ''}`.trim());
  }

  async refund(order: ProviderOrder, refund: RefundRequest): Promise<RefundResult> {
    const result = await this.#call('alipay.trade.refund', {
      out_trade_no: order.id,
      refund_amount: formatMinor(refund.amountMinor, 'CNY'),
      // Same out_request_no on a retry = the same refund, never a second one.
      out_request_no: refund.refundId,
      refund_reason: refund.reason.slice(0, 256),
    });
    if (result.code !== '10000') {
      throw new ProviderCallError(`alipay.trade.refund failed: ${result.code} ${result.sub_code ?? ''} ${result.sub_msg ?? ''}`.trim());
    }
    return { providerRefundId: result.trade_no ?? null, status: 'succeeded' };
  }

  ackSuccess(): NotificationAck {
    return { status: 200, contentType: 'text/plain; charset=utf-8', body: 'success' };
  }

  ackFailure(): NotificationAck {
    // Anything but `success` makes Alipay retry (for about 25 hours).
    return { status: 200, contentType: 'text/plain; charset=utf-8', body: 'fail' };
  }

  async #call(method: string, bizContent: Record<string, string>): Promise<AlipaySdkCommonResult> {
    try {
      return await (await this.#sdk()).exec(method, { bizContent }, { validateSign: true });
    } catch (error) {
      throw new ProviderCallError(`${method}: ${(error as Error).message}`, { cause: error });
    }
  }
}

function requireCny(order: ProviderOrder): void {
  if (order.currency !== 'CNY') throw new ProviderCallError(`alipay charges CNY only, not ${order.currency}`);
}

/** `total_amount` is yuan with (at most) two decimals: exact fen, or null. */
function parseYuan(text: string): number | null {
  return /^\d+(?:\.\d{1,2})?$/.test(text) ? parseMinor(text, 'CNY') : null;
}

function tradeStatus(status: string): PaymentNotice['status'] {
  if (paidStatuses.has(status)) return 'paid';
  // TRADE_CLOSED: closed unpaid (timeout) — or fully refunded, which only matters to a paid order.
  if (status === 'TRADE_CLOSED') return 'failed';
  return 'pending';
}

/** Form fields of an `application/x-www-form-urlencoded` body; a repeated name is refused as ambiguous. */
function parseForm(body: Buffer): Record<string, string> {
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, value] of new URLSearchParams(body.toString('utf8'))) {
    if (key in fields) throw new NotificationError('malformed', `parameter ${key} appears twice`);
    fields[key] = value;
  }
  return fields;
}

/** Alipay's `yyyy-MM-dd HH:mm:ss` in Beijing time (UTC+8, no daylight saving). */
export function beijingTime(instant: Date): string {
  return new Date(instant.getTime() + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}
