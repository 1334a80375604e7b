import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { paymentProviderIds } from './providers/provider.ts';

export const orderStates = ['created', 'paid', 'failed', 'expired', 'refunded', 'refund_pending', 'refund_failed'] as const;
/**
 * `created → paid | failed | expired`; `paid → refunded` when the provider returns the money at once, or
 * `paid → refund_pending → refunded | refund_failed` when it is still on its way (WeChat Pay `PROCESSING`);
 * `refund_failed → refunded | refund_pending | refund_failed` when staff refund again. Every other change is
 * refused.
 */
export type OrderState = (typeof orderStates)[number];

/**
 * One checkout. The primary key is the `out_trade_no` sent to Alipay and WeChat Pay (and Stripe's
 * `client_reference_id`): random, URL-safe, letters and digits only, at most 32 characters. The order is
 * bound at creation to its provider and to the app / merchant ids notices must carry.
 */
export const BillingOrder = defineEntity({
  name: 'BillingOrder',
  tableName: 'billing_order',
  properties: {
    id: p.string().length(32).primary(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    /** The account the package is for: a member's own, or an organisation's. */
    accountId: p.uuid().index(),
    /** Who opened the checkout: the member, or the organisation's owner or admin who pays (receipts go to them). */
    placedBy: p.uuid().nullable(),
    packageId: p.string().length(64),
    provider: p.enum(paymentProviderIds),
    /** What the payer is charged, in minor units of `currency`: `listMinor − creditMinor`. */
    amountMinor: p.integer(),
    /** The package's price in `currency` when the order was made. */
    listMinor: p.integer(),
    /** Unused time of the current period credited against the price (upgrades); 0 otherwise. */
    creditMinor: p.integer().default(0),
    currency: p.string().length(3),
    state: p.enum(orderStates).default('created'),
    /** What notices must say: Alipay app_id / WeChat appid, and Alipay seller_id / WeChat mchid. */
    appId: p.string().length(64).nullable(),
    merchantId: p.string().length(64).nullable(),
    /** Alipay trade_no, WeChat transaction_id, Stripe Checkout Session id (known at checkout). */
    providerTradeNo: p.string().length(255).nullable(),
    payUrl: p.text().nullable(),
    qrCode: p.text().nullable(),
    expiresAt: p.datetime(),
    paidAt: p.datetime().nullable(),
    /** When it became failed or expired. */
    closedAt: p.datetime().nullable(),
    /** When the money was returned (the provider said so): the refund's time in revenue stats. */
    refundedAt: p.datetime().nullable(),
    refundReason: p.text().nullable(),
    providerRefundId: p.string().length(255).nullable(),
    /** Our id of the latest refund attempt (WeChat `out_refund_no`): `<order id>R<attempt>`. */
    refundId: p.string().length(64).nullable(),
    /** Refund attempts the provider gave up (CLOSED, ABNORMAL, failed): the next attempt is number this + 1. */
    failedRefunds: p.integer().default(0),
    /** When the latest refund attempt was asked for. */
    refundRequestedAt: p.datetime().nullable(),
    /** Why the latest attempt failed, as the provider said (e.g. `ABNORMAL`), for staff. */
    refundFailure: p.text().nullable(),
    /**
     * The subscription term version the credit was computed from (upgrades): when the term changed before
     * this order was paid, the credit is not applied twice (subscription.service.ts).
     */
    creditVersion: p.integer().nullable(),
  },
});

export type IBillingOrder = InferEntity<typeof BillingOrder>;

/** The columns of `OrderRow`: `select ${orderRowColumns} from billing_order where …`. */
export const orderRowColumns = 'id, created_at, package_id, provider, state, amount_minor, currency, paid_at, refunded_at, provider_trade_no';

/** An order as raw SQL reads it, for the reads of many orders that load no entities (CSV export, statements). */
export interface OrderRow {
  id: string;
  created_at: Date | string;
  package_id: string;
  provider: string;
  state: string;
  amount_minor: number;
  currency: string;
  paid_at: Date | string | null;
  refunded_at: Date | string | null;
  provider_trade_no: string | null;
}

export const noticeOutcomes = ['applied', 'duplicate', 'failed', 'pending', 'ignored', 'rejected', 'unverified', 'error', 'refunded', 'refund_failed'] as const;
/**
 * - `applied`: this notice paid the order (exactly one per paid order);
 * - `refunded` / `refund_failed`: this refund notice (or refund query answer) settled a pending refund;
 * - `duplicate`: the order was already paid by the same trade: nothing credited;
 * - `failed`: it moved a created order to failed; `pending`: nothing final yet;
 * - `ignored`: verified, but changes no order (a refund update, a non-final state on a closed order);
 * - `rejected`: verified but it does not match the order (amount, currency, merchant, provider …);
 * - `unverified`: the signature or timestamp check failed; `error`: it could not be processed (retried).
 */
export type NoticeOutcome = (typeof noticeOutcomes)[number];

/** Every notification received, verified or not, with what it did and why: the evidence trail. */
export const BillingNotice = defineEntity({
  name: 'BillingNotice',
  tableName: 'billing_notice',
  properties: {
    id: p.uuid().primary(),
    createdAt: p.datetime().onCreate(() => new Date()),
    provider: p.enum(paymentProviderIds),
    source: p.enum(['notify', 'query'] as const),
    verified: p.boolean(),
    outcome: p.enum(noticeOutcomes),
    /** A typed code: the verification failure or the rejection reason. */
    reason: p.string().length(64).nullable(),
    detail: p.text().nullable(),
    orderId: p.string().length(128).nullable().index(),
    eventId: p.string().length(255).nullable(),
    providerTradeNo: p.string().length(255).nullable(),
    status: p.string().length(16).nullable(),
    amountMinor: p.integer().nullable(),
    currency: p.string().length(3).nullable(),
    /** The signature-relevant request headers (never cookies or authorization). */
    headers: p.json<Record<string, string>>().nullable(),
    /**
     * The raw bytes exactly as received (notify), or the provider's answer (query); of a notice that was
     * not verified, only the first KiB (notice-store.ts).
     */
    body: p.blob().nullable(),
    /** SHA-256 (hex) of the whole body as received. */
    bodySha256: p.string().length(64).nullable(),
    /** Size of the whole body as received, in bytes. */
    bodyBytes: p.integer().nullable(),
    /** The verified payload (for WeChat Pay, the decrypted resource). */
    payload: p.json<unknown>().nullable(),
  },
});
