import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { paymentProviderIds } from './providers/provider.ts';

export const orderStates = ['created', 'paid', 'failed', 'expired', 'refunded'] as const;
/** `created → paid | failed | expired`, `paid → refunded`; every other change is refused. */
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
    accountId: p.uuid().index(),
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
    refundedAt: p.datetime().nullable(),
    refundReason: p.text().nullable(),
    providerRefundId: p.string().length(255).nullable(),
    /**
     * The subscription term version the credit was computed from (upgrades): when the term changed before
     * this order was paid, the credit is not applied twice (subscription.service.ts).
     */
    creditVersion: p.integer().nullable(),
  },
});

export type IBillingOrder = InferEntity<typeof BillingOrder>;

export const noticeOutcomes = ['applied', 'duplicate', 'failed', 'pending', 'ignored', 'rejected', 'unverified', 'error'] as const;
/**
 * - `applied`: this notice paid the order (exactly one per paid order);
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
    /** The raw body exactly as received (notify), or the provider's answer (query). */
    body: p.text().nullable(),
    /** The verified payload (for WeChat Pay, the decrypted resource). */
    payload: p.json<unknown>().nullable(),
  },
});

export type IBillingNotice = InferEntity<typeof BillingNotice>;
