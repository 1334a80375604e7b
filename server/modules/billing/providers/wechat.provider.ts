/**
 * WeChat Pay API v3, Native payments (a `code_url` drawn as a QR code), with `node:crypto` only.
 *
 * - Our requests are signed SHA256withRSA with the merchant key over `METHOD\nPATH?QUERY\nts\nnonce\nbody\n`
 *   and sent as `Authorization: WECHATPAY2-SHA256-RSA2048 mchid=…,nonce_str=…,signature=…,timestamp=…,serial_no=…`.
 * - Its answers and notifications are verified SHA256withRSA over `ts\nnonce\nbody\n` with the platform
 *   key that `Wechatpay-Serial` names: a platform public key (`PUB_KEY_ID_…`) or a platform certificate's
 *   serial — both modes at once while a merchant migrates — and `Wechatpay-Timestamp` must be within 5 min.
 * - A notification's `resource` is then decrypted with AES-256-GCM under the APIv3 key (nonce and
 *   associated data from the resource, the last 16 bytes of the ciphertext are the tag).
 */
import { createDecipheriv, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { request } from 'undici';
import type { WechatSettings } from '../../../config/payments.ts';
import { loadCertificate, loadPrivateKey, loadPublicKey } from './keys.ts';
import {
  header,
  NotificationError,
  ProviderCallError,
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

/** How far `Wechatpay-Timestamp` may be from our clock (WeChat Pay's own guidance: 5 minutes). */
export const wechatTimestampWindowSeconds = 300;

/** A refund as WeChat Pay describes it: in a REFUND.* notice's resource, and in a refund query's answer. */
interface Refund {
  mchid?: string;
  out_trade_no?: string;
  out_refund_no?: string;
  refund_id?: string;
  /** Notices call it `refund_status`; query and create answers `status`. */
  refund_status?: string;
  status?: string;
  amount?: { total?: number; refund?: number };
}

interface Transaction {
  appid?: string;
  mchid?: string;
  out_trade_no?: string;
  transaction_id?: string;
  trade_state?: string;
  amount?: { total?: number; currency?: string };
}

export class WechatProvider implements PaymentProvider {
  readonly id = 'wechat' as const;
  readonly currencies = ['CNY'] as const;
  readonly appId: string;
  readonly merchantId: string;
  readonly #settings: WechatSettings;
  readonly #privateKey: KeyObject;
  readonly #apiV3Key: Buffer;
  /** Platform keys by the name `Wechatpay-Serial` uses for them. */
  readonly #platformKeys = new Map<string, KeyObject>();
  readonly #notifyUrl: string;

  constructor(settings: WechatSettings, urls: { notifyUrl: string }) {
    this.#settings = settings;
    this.appId = settings.appId;
    this.merchantId = settings.mchId;
    this.#notifyUrl = urls.notifyUrl;
    this.#privateKey = loadPrivateKey(settings.privateKey, 'payments.wechat.privateKey');
    this.#apiV3Key = Buffer.from(settings.apiV3Key, 'utf8');
    if (settings.platformPublicKey) {
      this.#platformKeys.set(settings.platformPublicKey.id, loadPublicKey(settings.platformPublicKey.key, 'payments.wechat.platformPublicKey'));
    }
    settings.platformCertificates.forEach((text, index) => {
      const cert = loadCertificate(text, `payments.wechat.platformCertificates.${index}`);
      this.#platformKeys.set(cert.serial, cert.publicKey);
    });
  }

  async createPayment(order: ProviderOrder): Promise<PaymentStart> {
    if (order.currency !== 'CNY') throw new ProviderCallError(`wechat charges CNY only, not ${order.currency}`);
    const { status, data } = await this.#call('POST', '/v3/pay/transactions/native', {
      appid: this.appId,
      mchid: this.merchantId,
      description: order.description.slice(0, 127),
      out_trade_no: order.id,
      // WeChat Pay refuses payment after our order expires, so a late payment cannot happen.
      time_expire: rfc3339Beijing(order.expiresAt),
      notify_url: this.#notifyUrl,
      amount: { total: order.amountMinor, currency: 'CNY' },
    });
    const codeUrl = (data as { code_url?: unknown } | null)?.code_url;
    if (status !== 200 || typeof codeUrl !== 'string') throw new ProviderCallError(`native order failed: HTTP ${status} ${describe(data)}`);
    return { qrCode: codeUrl };
  }

  async parseNotification(request: RawNotification): Promise<ParsedNotification> {
    this.#verifySignature(request.headers, request.body, request.receivedAt ?? Date.now());
    let event: { id?: unknown; event_type?: unknown; resource?: Record<string, unknown> };
    try {
      event = JSON.parse(request.body.toString('utf8')) as typeof event;
    } catch {
      throw new NotificationError('malformed', 'the body is not JSON');
    }
    if (typeof event.id !== 'string' || typeof event.event_type !== 'string' || !event.resource) {
      throw new NotificationError('malformed', 'id, event_type or resource is missing');
    }
    const plaintext = this.decryptResource(event.resource);
    if (event.event_type.startsWith('REFUND.')) {
      return { kind: 'refund', refund: this.#refundNotice(plaintext as Refund, event.id, 'notify') };
    }
    if (event.event_type !== 'TRANSACTION.SUCCESS') {
      return { kind: 'ignored', eventId: event.id, reason: `event ${event.event_type} changes no order`, raw: plaintext };
    }
    const transaction = plaintext as Transaction;
    return { kind: 'notice', notice: this.#notice(transaction, event.id, 'notify') };
  }

  /** AES-256-GCM with the APIv3 key; throws `decrypt_failed` unless it authenticates. */
  decryptResource(resource: Record<string, unknown>): unknown {
    const { algorithm, ciphertext, nonce } = resource;
    const associatedData = typeof resource.associated_data === 'string' ? resource.associated_data : '';
    if (algorithm !== 'AEAD_AES_256_GCM' || typeof ciphertext !== 'string' || typeof nonce !== 'string') {
      throw new NotificationError('malformed', 'resource is not AEAD_AES_256_GCM with ciphertext and nonce');
    }
    const bytes = Buffer.from(ciphertext, 'base64');
    if (bytes.length <= 16) throw new NotificationError('decrypt_failed', 'resource ciphertext is too short');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#apiV3Key, Buffer.from(nonce, 'utf8'));
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      const plain = Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]);
      return JSON.parse(plain.toString('utf8'));
    } catch (error) {
      throw new NotificationError('decrypt_failed', 'resource does not decrypt with the APIv3 key', { cause: error });
    }
  }

  async query(order: ProviderOrder): Promise<PaymentNotice | null> {
    const path = `/v3/pay/transactions/out-trade-no/${encodeURIComponent(order.id)}?mchid=${encodeURIComponent(this.merchantId)}`;
    const { status, data } = await this.#call('GET', path);
    if (status === 404 && (data as { code?: string } | null)?.code === 'ORDER_NOT_EXIST') return null;
    if (status !== 200) throw new ProviderCallError(`order query failed: HTTP ${status} ${describe(data)}`);
    const transaction = data as Transaction;
    if (transaction.out_trade_no !== order.id) throw new ProviderCallError('order query answered about another order');
    return this.#notice(transaction, `query:${transaction.transaction_id ?? order.id}:${transaction.trade_state ?? ''}`, 'query');
  }

  async close(order: ProviderOrder): Promise<void> {
    const { status, data } = await this.#call('POST', `/v3/pay/transactions/out-trade-no/${encodeURIComponent(order.id)}/close`, {
      mchid: this.merchantId,
    });
    if (status !== 204 && status !== 200) throw new ProviderCallError(`close failed: HTTP ${status} ${describe(data)}`);
  }

  async refund(order: ProviderOrder, refund: RefundRequest): Promise<RefundResult> {
    const { status, data } = await this.#call('POST', '/v3/refund/domestic/refunds', {
      out_trade_no: order.id,
      // Same out_refund_no on a retry = the same refund, never a second one.
      out_refund_no: refund.refundId,
      reason: refund.reason.slice(0, 80),
      // Where WeChat Pay says how a PROCESSING refund ended (REFUND.SUCCESS, .CLOSED, .ABNORMAL).
      notify_url: this.#notifyUrl,
      amount: { refund: refund.amountMinor, total: order.amountMinor, currency: 'CNY' },
    });
    const result = data as Refund | null;
    if (status !== 200 || !result) throw new ProviderCallError(`refund failed: HTTP ${status} ${describe(data)}`);
    const providerStatus = result.status ?? '';
    return { providerRefundId: result.refund_id ?? null, status: refundStatus(providerStatus), providerStatus };
  }

  async queryRefund(order: ProviderOrder, refund: { refundId: string }): Promise<RefundNotice | null> {
    const { status, data } = await this.#call('GET', `/v3/refund/domestic/refunds/${encodeURIComponent(refund.refundId)}`);
    if (status === 404 && (data as { code?: string } | null)?.code === 'RESOURCE_NOT_EXISTS') return null;
    if (status !== 200) throw new ProviderCallError(`refund query failed: HTTP ${status} ${describe(data)}`);
    const answer = data as Refund;
    if (answer.out_refund_no !== refund.refundId || answer.out_trade_no !== order.id) throw new ProviderCallError('refund query answered about another refund');
    // The query answer names no merchant: it is ours, since only our signed request could ask.
    return this.#refundNotice({ ...answer, mchid: this.merchantId }, `query-refund:${answer.refund_id ?? refund.refundId}:${answer.status ?? ''}`, 'query');
  }

  ackSuccess(): NotificationAck {
    return { status: 204, contentType: null, body: '' };
  }

  ackFailure(kind: 'rejected' | 'error'): NotificationAck {
    // Any 4xx/5xx makes WeChat Pay retry; the body is its documented error shape.
    return kind === 'rejected'
      ? { status: 401, contentType: 'application/json', body: JSON.stringify({ code: 'FAIL', message: 'signature verification failed' }) }
      : { status: 500, contentType: 'application/json', body: JSON.stringify({ code: 'FAIL', message: 'temporarily unable to process' }) };
  }

  #notice(transaction: Transaction, eventId: string, source: 'notify' | 'query'): PaymentNotice {
    const total = transaction.amount?.total;
    if (typeof transaction.out_trade_no !== 'string' || !Number.isSafeInteger(total) || (total as number) < 0) {
      throw new NotificationError('malformed', 'out_trade_no or amount.total is missing');
    }
    return {
      provider: 'wechat',
      orderId: transaction.out_trade_no,
      providerTradeNo: transaction.transaction_id ?? null,
      amountMinor: total as number,
      currency: transaction.amount?.currency ?? 'CNY',
      appId: transaction.appid ?? null,
      merchantId: transaction.mchid ?? null,
      status: tradeState(transaction.trade_state),
      eventId,
      source,
      raw: transaction,
    };
  }

  #refundNotice(refund: Refund, eventId: string, source: 'notify' | 'query'): RefundNotice {
    const amount = refund.amount?.refund;
    const providerStatus = refund.refund_status ?? refund.status;
    if (typeof refund.out_trade_no !== 'string' || typeof refund.out_refund_no !== 'string' || typeof providerStatus !== 'string' || !Number.isSafeInteger(amount) || (amount as number) < 0) {
      throw new NotificationError('malformed', 'out_trade_no, out_refund_no, refund status or amount.refund is missing');
    }
    return {
      provider: 'wechat',
      orderId: refund.out_trade_no,
      refundId: refund.out_refund_no,
      providerRefundId: refund.refund_id ?? null,
      amountMinor: amount as number,
      merchantId: refund.mchid ?? null,
      status: refundStatus(providerStatus),
      providerStatus,
      eventId,
      source,
      raw: refund,
    };
  }

  /** Verifies WeChat Pay's signature headers over `body`; throws a `NotificationError` with a typed reason. */
  #verifySignature(headers: RawNotification['headers'], body: Buffer, now: number): void {
    const timestamp = header(headers, 'wechatpay-timestamp');
    const nonce = header(headers, 'wechatpay-nonce');
    const signature = header(headers, 'wechatpay-signature');
    const serial = header(headers, 'wechatpay-serial');
    if (!timestamp || !nonce || !signature || !serial || !/^\d{1,12}$/.test(timestamp)) {
      throw new NotificationError('malformed', 'Wechatpay-Timestamp, -Nonce, -Signature or -Serial is missing');
    }
    const key = this.#platformKeys.get(serial);
    if (!key) throw new NotificationError('unknown_key', `Wechatpay-Serial ${serial} names no configured platform key or certificate`);
    const message = Buffer.concat([Buffer.from(`${timestamp}\n${nonce}\n`), body, Buffer.from('\n')]);
    let valid: boolean;
    try {
      valid = verify('sha256', message, key, Buffer.from(signature, 'base64'));
    } catch {
      valid = false;
    }
    if (!valid) throw new NotificationError('bad_signature', 'Wechatpay-Signature does not verify with the platform key');
    if (Math.abs(Math.floor(now / 1000) - Number(timestamp)) > wechatTimestampWindowSeconds) {
      throw new NotificationError('stale_timestamp', `Wechatpay-Timestamp is more than ${wechatTimestampWindowSeconds} s from now`);
    }
  }

  async #call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; data: unknown }> {
    const url = new URL(`${this.#settings.baseUrl}${path}`);
    const text = body === undefined ? '' : JSON.stringify(body);
    let response;
    try {
      response = await request(url, {
        method,
        headers: {
          authorization: this.authorization(method, `${url.pathname}${url.search}`, text),
          accept: 'application/json',
          'user-agent': 'svc',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : text,
        headersTimeout: 15_000,
        bodyTimeout: 15_000,
      });
    } catch (error) {
      throw new ProviderCallError(`${method} ${url.pathname}: ${(error as Error).message}`, { cause: error });
    }
    const raw = Buffer.from(await response.body.arrayBuffer());
    // Only a signed answer is believed; an unsigned error is reported, never acted on as success.
    if (response.statusCode < 300) {
      try {
        this.#verifySignature(response.headers, raw, Date.now());
      } catch (error) {
        throw new ProviderCallError(`${method} ${url.pathname}: the answer is not signed by WeChat Pay (${(error as Error).message})`, { cause: error });
      }
    }
    let data: unknown = null;
    if (raw.length > 0) {
      try {
        data = JSON.parse(raw.toString('utf8'));
      } catch {
        throw new ProviderCallError(`${method} ${url.pathname}: HTTP ${response.statusCode} with a body that is not JSON`);
      }
    }
    return { status: response.statusCode, data };
  }

  /** The `Authorization` header for one request (exposed so tests can check it against WeChat's rule). */
  authorization(method: string, pathAndQuery: string, body: string): string {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = randomBytes(16).toString('hex');
    const message = `${method}\n${pathAndQuery}\n${timestamp}\n${nonce}\n${body}\n`;
    const signature = sign('sha256', Buffer.from(message), this.#privateKey).toString('base64');
    return (
      `WECHATPAY2-SHA256-RSA2048 mchid="${this.merchantId}",nonce_str="${nonce}",signature="${signature}",` +
      `timestamp="${timestamp}",serial_no="${this.#settings.merchantSerialNo}"`
    );
  }
}

function tradeState(state: string | undefined): PaymentNotice['status'] {
  switch (state) {
    case 'SUCCESS':
    case 'REFUND': // paid, then (partly) refunded
      return 'paid';
    case 'CLOSED':
    case 'REVOKED':
    case 'PAYERROR':
      return 'failed';
    default:
      return 'pending'; // NOTPAY, USERPAYING, ACCEPT
  }
}

/** WeChat Pay's refund states: SUCCESS is money returned; CLOSED and ABNORMAL are given up; the rest (PROCESSING) wait. */
function refundStatus(status: string): RefundStatus {
  switch (status) {
    case 'SUCCESS':
      return 'succeeded';
    case 'CLOSED':
    case 'ABNORMAL':
      return 'failed';
    default:
      return 'pending';
  }
}

/** RFC 3339 in Beijing time, the form WeChat Pay documents for `time_expire`. */
function rfc3339Beijing(instant: Date): string {
  return `${new Date(instant.getTime() + 8 * 3600_000).toISOString().slice(0, 19)}+08:00`;
}

function describe(data: unknown): string {
  const error = data as { code?: unknown; message?: unknown } | null;
  return error && typeof error === 'object' ? `${String(error.code ?? '')} ${String(error.message ?? '')}`.trim() : '';
}
