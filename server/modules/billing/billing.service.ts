/**
 * Orders and notifications (DESIGN §8.6, SECURITY "Payments"). The rules, enforced here for every
 * transport:
 *   - an order is priced from config in minor units, bound to its provider and to the app / merchant ids
 *     its notices must carry, and expires after `payments.orderTtlMinutes` (2 h);
 *   - a notification is verified by its provider, then applied in ONE transaction that locks the order
 *     row, checks it (notice-rules.ts), moves its state, calls `onPaid(order, tx)` inside the same
 *     transaction, and stores the notice — so replays and concurrent duplicates, on any number of
 *     instances, credit exactly once; unique keys on (provider, trade no) and on applied events back it up;
 *   - every notification is stored, verified or not, with its outcome and reason;
 *   - the provider's ack is produced only after that transaction committed;
 *   - reconciliation asks the provider about orders still `created`, and expires them (after closing the
 *     trade at the provider) once their time is up.
 */
import { randomBytes } from 'node:crypto';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Config } from '../../config/config.ts';
import { formatMinor } from '../../config/money.ts';
import type { Database, Em } from '../../db/orm.ts';
import { AppError } from '../../errors/app-error.ts';
import { LocalGcra } from '../../rate-limit/gcra.ts';
import { BillingOrder, type IBillingOrder, type NoticeOutcome, type OrderState } from './billing.entity.ts';
import { decideNotice, type OrderFacts, type RejectReason } from './notice-rules.ts';
import { NoticeStore, notifyEvidence, type Evidence, type UnverifiedBudget } from './notice-store.ts';
import { Refunds, type RefundNoticeResult, type RefundReconcileResult } from './refunds.ts';
import {
  NotificationError,
  ProviderCallError,
  type NotificationAck,
  type PaymentNotice,
  type PaymentProviderId,
  type ProviderOrder,
  type RawNotification,
  type VerificationFailure,
} from './providers/provider.ts';
import type { PaymentProviders } from './providers/registry.ts';

export interface OrderView {
  /** The `out_trade_no`. */
  id: string;
  /** The account the package is for: the member's own, or an organisation's. */
  accountId: string;
  /** The person who opened the checkout (an organisation's owner or admin pays for it); null on older orders. */
  placedBy: string | null;
  /** The organisation that pays (= `accountId`) when someone else opened the checkout for it; null for a member's own order. */
  organisationId: string | null;
  packageId: string;
  provider: PaymentProviderId;
  state: OrderState;
  /** Charged, in minor units of `currency` (6500 = 65.00 CNY). */
  amountMinor: number;
  /** The same as a decimal string with the currency's digits ("65.00"). */
  amount: string;
  listMinor: number;
  creditMinor: number;
  currency: string;
  providerTradeNo: string | null;
  payUrl: string | null;
  qrCode: string | null;
  createdAt: Date;
  expiresAt: Date;
  paidAt: Date | null;
  closedAt: Date | null;
  refundedAt: Date | null;
  refundReason: string | null;
  /** When the latest refund was asked for (it may still be `refund_pending`). */
  refundRequestedAt: Date | null;
  /** Why the latest refund failed, in the provider's words (`CLOSED`, `ABNORMAL`); null unless `refund_failed`. */
  refundFailure: string | null;
  creditVersion: number | null;
}

/** Who asked for a change made by staff (a refund; null when the provider settled it), for the audit log. */
export interface ChangeContext {
  actorId: string | null;
  reason: string | null;
  requestId: string | null;
  /** The state the order left (`paid`, `refund_pending`, `refund_failed`). */
  from?: OrderState;
}

export interface BillingHooks {
  /**
   * Runs inside the transaction that marks the order paid (exactly once per order). Whatever it writes
   * through `tx` commits or rolls back with the payment; if it throws, nothing is credited and the
   * provider is told to retry.
   */
  onPaid(order: OrderView, tx: Em): Promise<void>;
  /** Runs inside the transaction that marks an order refunded (the provider returned the money). */
  onRefunded?(order: OrderView, tx: Em, context: ChangeContext): Promise<void>;
  /** Runs inside the transaction that moves an order to `refund_pending` or `refund_failed`. */
  onRefundUpdated?(order: OrderView, tx: Em, context: ChangeContext): Promise<void>;
  /** Runs inside the transaction that moves a created order to failed or expired. */
  onClosed?(order: OrderView, tx: Em): Promise<void>;
  /**
   * After the transaction that changed an order's state committed (paid, failed, expired, refunded): live
   * updates, receipts. Awaited before the caller hears of the change (so the account's new package is
   * announced before the provider's ack or the sandbox page's answer); a failure is swallowed — it cannot
   * undo the change.
   */
  changed?(order: OrderView, from: OrderState): Promise<void> | void;
}

export interface CreateOrderOptions {
  /** Who opens the checkout, when not the account itself (an organisation's owner or admin). */
  placedBy?: string | null;
  /** Alipay only: `mobile` → alipay.trade.wap.pay, otherwise alipay.trade.page.pay. */
  device?: 'desktop' | 'mobile';
  /** Where the payer returns after paying; default `{webUrl}/account/orders/{id}`. */
  returnUrl?: string;
  /** Credit from the unused part of the current period (upgrades, see subscription-math.ts); 0 by default. */
  creditMinor?: number;
  /** The version of the subscription term the credit was computed from. */
  creditVersion?: number | null;
}

export interface Checkout {
  order: OrderView;
  payUrl?: string;
  qrCode?: string;
}

export type NoticeResult =
  | { outcome: 'applied'; order: OrderView }
  | { outcome: 'duplicate'; order: OrderView }
  | { outcome: 'failed'; order: OrderView }
  | { outcome: 'pending'; order: OrderView }
  | { outcome: 'ignored'; reason: string; order: OrderView | null }
  | { outcome: 'rejected'; reason: RejectReason; detail: string; order: OrderView | null };

export type NotificationOutcome =
  | NoticeResult
  | RefundNoticeResult<OrderView>
  /** `stored`: false when the provider's unverified budget was spent (answered, not written). */
  | { outcome: 'unverified'; reason: VerificationFailure; detail: string; stored: boolean }
  | { outcome: 'error'; error: unknown };

export interface NotificationHandled {
  result: NotificationOutcome;
  /** Send exactly this, after this call returned: it is produced only once the notice is committed. */
  ack: NotificationAck;
}

export type ReconcileResult =
  | { orderId: string; result: 'paid' | 'failed' | 'expired' | 'pending' | RefundReconcileResult }
  | { orderId: string; result: 'unchanged'; state: OrderState }
  | { orderId: string; result: 'skipped' | 'error'; detail: string };

export interface ReconcileReport {
  checked: number;
  results: ReconcileResult[];
}

/** The `packageId` of a credit top-up order (modules/credit): no package is bought, credit is. */
export const CREDIT_PACKAGE_ID = 'credit';

const orderIdAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * `svc` + 24 characters of [A-Za-z0-9] (~142 random bits): unguessable, and valid as an out_trade_no for
 * both Alipay (≤ 64, letters, digits, underscore) and WeChat Pay (6–32 characters).
 */
export function newOrderId(): string {
  let id = 'svc';
  while (id.length < 27) {
    for (const byte of randomBytes(32)) {
      // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && id.length < 27) id += orderIdAlphabet[byte % 62];
    }
  }
  return id;
}

export class BillingOrders {
  readonly #config: Config;
  readonly #db: Database;
  readonly #providers: PaymentProviders;
  readonly #hooks: BillingHooks;
  readonly #now: () => number;
  readonly #notices: NoticeStore;
  readonly #refunds: Refunds<OrderView>;

  /**
   * `budget`: whether one more unverified notice of a provider may be stored now (the service passes its
   * Redis rate limiter, shared by every instance); default an in-process limit of
   * `payments.unverifiedPerMinute`.
   */
  constructor(config: Config, db: Database, providers: PaymentProviders, hooks: BillingHooks, options: { now?: () => number; budget?: UnverifiedBudget } = {}) {
    this.#config = config;
    this.#db = db;
    this.#providers = providers;
    this.#hooks = hooks;
    this.#now = options.now ?? Date.now;
    this.#notices = new NoticeStore(db, {
      now: this.#now,
      budget: options.budget ?? localBudget(config.payments.unverifiedPerMinute),
      retentionDays: config.payments.unverifiedRetentionDays,
    });
    this.#refunds = new Refunds({
      db,
      providers,
      notices: this.#notices,
      now: this.#now,
      view: orderView,
      asProvider: (order) => providerOrder(order, order.packageId),
      hooks,
      changed: (order, from) => this.#changed(order, from),
    });
  }

  /**
   * Creates an order for one month of `packageId`, priced from config (`packages[].prices`) in
   * `currency`, and starts the payment at `provider`: `{payUrl}` to redirect to or `{qrCode}` to draw.
   */
  async create(
    accountId: string,
    packageId: string,
    providerId: PaymentProviderId,
    currency: string,
    options: CreateOrderOptions = {},
  ): Promise<Checkout> {
    const provider = this.#providers.require(providerId);
    const pkg = this.#findPackage(packageId);
    if (provider.currencies && !provider.currencies.includes(currency)) {
      throw new AppError('invalid_request', `${providerId} charges in ${provider.currencies.join(', ')}, not ${currency}.`, { param: 'currency' });
    }
    const listMinor = Object.hasOwn(pkg.prices, currency) ? pkg.prices[currency] : undefined;
    if (listMinor === undefined) {
      throw new AppError('invalid_request', `Package ${packageId} has no price in ${currency}.`, { param: 'currency' });
    }
    const creditMinor = options.creditMinor ?? 0;
    if (!Number.isSafeInteger(creditMinor) || creditMinor < 0 || creditMinor >= listMinor) {
      throw new AppError('invalid_request', `A credit must be a whole number of minor units below the price (${listMinor}).`, { param: 'creditMinor' });
    }
    return this.#open(accountId, { packageId, listMinor, creditMinor, description: pkg.name }, providerId, currency, options);
  }

  /** A credit top-up order of `amountMinor` (modules/credit); paid, the credit hooks append the purchase. */
  async createCredit(accountId: string, amountMinor: number, providerId: PaymentProviderId, currency: string, options: CreateOrderOptions = {}): Promise<Checkout> {
    const provider = this.#providers.require(providerId);
    if (provider.currencies && !provider.currencies.includes(currency)) {
      throw new AppError('invalid_request', `${providerId} charges in ${provider.currencies.join(', ')}, not ${currency}.`, { param: 'currency' });
    }
    if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0) throw new AppError('invalid_request', 'A top-up must be a positive whole number of minor units.', { param: 'amount' });
    return this.#open(accountId, { packageId: CREDIT_PACKAGE_ID, listMinor: amountMinor, creditMinor: 0, description: 'credit' }, providerId, currency, {
      ...options,
      returnUrl: options.returnUrl,
    });
  }

  async #open(
    accountId: string,
    priced: { packageId: string; listMinor: number; creditMinor: number; description: string },
    providerId: PaymentProviderId,
    currency: string,
    options: CreateOrderOptions,
  ): Promise<Checkout> {
    const provider = this.#providers.require(providerId);
    const { packageId, listMinor, creditMinor } = priced;
    const now = new Date(this.#now());
    const em = this.#db.orm.em.fork();
    const order = em.create(BillingOrder, {
      id: newOrderId(),
      createdAt: now,
      updatedAt: now,
      accountId,
      placedBy: options.placedBy ?? null,
      packageId,
      provider: providerId,
      amountMinor: listMinor - creditMinor,
      listMinor,
      creditMinor,
      currency,
      state: 'created',
      appId: provider.appId,
      merchantId: provider.merchantId,
      providerTradeNo: null,
      payUrl: null,
      qrCode: null,
      expiresAt: new Date(now.getTime() + this.#config.payments.orderTtlMinutes * 60_000),
      paidAt: null,
      closedAt: null,
      refundedAt: null,
      refundReason: null,
      providerRefundId: null,
      creditVersion: options.creditVersion ?? null,
    });
    await em.flush();
    let start;
    try {
      start = await provider.createPayment(providerOrder(order, priced.description), {
        device: options.device,
        returnUrl: options.returnUrl === undefined ? `${this.#config.server.webUrl}/account/orders/${order.id}` : options.returnUrl.endsWith('=') ? `${options.returnUrl}${order.id}` : options.returnUrl,
      });
    } catch (error) {
      order.state = 'failed';
      order.closedAt = new Date(this.#now());
      await em.flush();
      await this.#hooks.onClosed?.(orderView(order), em).catch(() => undefined);
      throw new AppError('payment_provider_error', `${providerId} could not start the payment; nothing was charged.`, { cause: error });
    }
    order.payUrl = start.payUrl ?? null;
    order.qrCode = start.qrCode ?? null;
    order.providerTradeNo = start.providerTradeNo ?? null;
    await em.flush();
    return { order: orderView(order), payUrl: start.payUrl, qrCode: start.qrCode };
  }

  async find(orderId: string): Promise<OrderView | null> {
    const order = await this.#db.orm.em.fork().findOne(BillingOrder, { id: orderId });
    return order ? orderView(order) : null;
  }

  /** An account's orders, newest first. */
  async listForAccount(accountId: string, limit = 50): Promise<OrderView[]> {
    const orders = await this.#db.orm.em.fork().find(BillingOrder, { accountId }, { orderBy: { createdAt: 'desc' }, limit });
    return orders.map(orderView);
  }

  /**
   * Everything a notify route does: verify through the provider, store, apply, and return the ack to
   * send. Never throws for a bad or unprocessable notification; the ack then asks the provider to retry.
   */
  async handleNotification(providerId: PaymentProviderId, request: RawNotification): Promise<NotificationHandled> {
    const provider = this.#providers.require(providerId);
    const evidence = notifyEvidence(request);
    try {
      let parsed;
      try {
        parsed = await provider.parseNotification(request);
      } catch (error) {
        if (!(error instanceof NotificationError)) throw error;
        const stored = await this.#notices.storeUnverified({
          provider: providerId,
          source: 'notify',
          verified: false,
          outcome: 'unverified',
          reason: error.reason,
          detail: error.message,
          evidence,
        });
        return { result: { outcome: 'unverified', reason: error.reason, detail: error.message, stored }, ack: provider.ackFailure('rejected') };
      }
      if (parsed.kind === 'ignored') {
        await this.#notices.store(this.#db.orm.em.fork(), {
          provider: providerId,
          source: 'notify',
          verified: true,
          outcome: 'ignored',
          reason: 'no_order_change',
          detail: parsed.reason,
          eventId: parsed.eventId,
          payload: parsed.raw,
          evidence,
        });
        return { result: { outcome: 'ignored', reason: parsed.reason, order: null }, ack: provider.ackSuccess() };
      }
      if (parsed.kind === 'refund') return { result: await this.#refunds.apply(parsed.refund, evidence), ack: provider.ackSuccess() };
      const result = await this.applyNotice(parsed.notice, evidence);
      // Verified notices are acknowledged whatever they did: a retry of a mismatch cannot change it, and
      // it is stored for staff.
      return { result, ack: provider.ackSuccess() };
    } catch (error) {
      await this.#notices.storeUnverified({
        provider: providerId,
        source: 'notify',
        verified: false,
        outcome: 'error',
        reason: 'processing_failed',
        detail: (error as Error).message,
        evidence,
      });
      return { result: { outcome: 'error', error }, ack: provider.ackFailure('error') };
    }
  }

  /**
   * Applies a verified notice in one transaction (see the file comment). Idempotent: the same notice
   * applied any number of times, concurrently or not, from any instance, credits at most once.
   */
  async applyNotice(notice: PaymentNotice, evidence: Evidence = { headers: null, body: null }): Promise<NoticeResult> {
    const body = evidence.body ?? (notice.source === 'query' ? safeJson(notice.raw) : null);
    // Order ids are letters and digits: anything else names no order, and is not sent to the database.
    const orderKnowable = /^[A-Za-z0-9]{1,32}$/.test(notice.orderId);
    try {
      const result = await this.#db.orm.em.fork().transactional(async (tx): Promise<NoticeResult> => {
        const order = orderKnowable ? await tx.findOne(BillingOrder, { id: notice.orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
        const decision = decideNotice(order ? orderFacts(order) : null, notice);
        let result: NoticeResult;
        let outcome: NoticeOutcome;
        let reason: string | null = null;
        let detail: string | null = null;
        switch (decision.kind) {
          case 'pay': {
            const paid = order!;
            paid.state = 'paid';
            paid.paidAt = new Date(this.#now());
            paid.providerTradeNo = notice.providerTradeNo ?? paid.providerTradeNo;
            await tx.flush();
            await this.#hooks.onPaid(orderView(paid), tx);
            result = { outcome: 'applied', order: orderView(paid) };
            outcome = 'applied';
            break;
          }
          case 'fail': {
            const failed = order!;
            failed.state = 'failed';
            failed.closedAt = new Date(this.#now());
            failed.providerTradeNo = failed.providerTradeNo ?? notice.providerTradeNo;
            await tx.flush();
            await this.#hooks.onClosed?.(orderView(failed), tx);
            result = { outcome: 'failed', order: orderView(failed) };
            outcome = 'failed';
            break;
          }
          case 'duplicate':
            result = { outcome: 'duplicate', order: orderView(order!) };
            outcome = 'duplicate';
            break;
          case 'pending':
            result = { outcome: 'pending', order: orderView(order!) };
            outcome = 'pending';
            break;
          case 'ignore':
            result = { outcome: 'ignored', reason: decision.reason, order: order ? orderView(order) : null };
            outcome = 'ignored';
            reason = 'no_order_change';
            detail = decision.reason;
            break;
          case 'reject':
            result = { outcome: 'rejected', reason: decision.reason, detail: decision.detail, order: order ? orderView(order) : null };
            outcome = 'rejected';
            reason = decision.reason;
            detail = decision.detail;
            break;
        }
        // Reconciliation asks every few minutes; an unchanged answer is not worth a row each time.
        if (!(notice.source === 'query' && (outcome === 'pending' || outcome === 'duplicate'))) {
          await this.#notices.store(tx, { ...noticeColumns(notice), verified: true, outcome, reason, detail, evidence: { headers: evidence.headers, body } });
        }
        return result;
      });
      if (result.outcome === 'applied' || result.outcome === 'failed') await this.#changed(result.order, 'created');
      return result;
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      // Another order already holds this provider trade, or this event was applied to another order.
      const reason: RejectReason = 'trade_already_used';
      const detail = `trade ${notice.providerTradeNo ?? '-'} / event ${notice.eventId} already paid another order`;
      await this.#notices.store(this.#db.orm.em.fork(), { ...noticeColumns(notice), verified: true, outcome: 'rejected', reason, detail, evidence: { headers: evidence.headers, body } });
      return { outcome: 'rejected', reason, detail, order: orderKnowable ? await this.find(notice.orderId) : null };
    }
  }

  /**
   * Asks the providers about orders still `created` (older than `minAgeMs`, oldest first): a payment
   * whose notification was lost is applied, a failed one is failed, and one past its expiry is closed at
   * the provider and expired. And about refunds still `refund_pending`: a refund that finished or was
   * given up is settled. Staff can run it for one order with `reconcileOrder`.
   */
  async reconcile(options: { now?: Date; limit?: number; minAgeMs?: number } = {}): Promise<ReconcileReport> {
    const now = options.now ?? new Date(this.#now());
    const before = new Date(now.getTime() - (options.minAgeMs ?? 60_000));
    const em = this.#db.orm.em.fork();
    const limit = options.limit ?? 200;
    const unpaid = await em.find(BillingOrder, { state: 'created', createdAt: { $lte: before } }, { orderBy: { createdAt: 'asc' }, limit, fields: ['id'] });
    const refunding = await em.find(BillingOrder, { state: 'refund_pending', refundRequestedAt: { $lte: before } }, { orderBy: { refundRequestedAt: 'asc' }, limit, fields: ['id'] });
    const orders = [...unpaid, ...refunding];
    const results: ReconcileResult[] = [];
    for (const order of orders) {
      try {
        results.push(await this.reconcileOrder(order.id, now));
      } catch (error) {
        // One order that cannot be settled now (e.g. onPaid failed) must not stop the others.
        results.push({ orderId: order.id, result: 'error', detail: (error as Error).message });
      }
    }
    return { checked: orders.length, results };
  }

  async reconcileOrder(orderId: string, now: Date = new Date(this.#now())): Promise<ReconcileResult> {
    const em = this.#db.orm.em.fork();
    const order = await em.findOne(BillingOrder, { id: orderId });
    if (!order) throw new AppError('not_found', `No order ${orderId}.`);
    if (order.state === 'refund_pending') {
      const settled = await this.#refunds.reconcile(order);
      return settled.result === 'skipped' || settled.result === 'error' ? { orderId, result: settled.result, detail: settled.detail ?? '' } : { orderId, result: settled.result };
    }
    if (order.state !== 'created') return { orderId, result: 'unchanged', state: order.state };
    const provider = this.#providers.get(order.provider);
    if (!provider) return { orderId, result: 'skipped', detail: `provider ${order.provider} is off` };
    const asProvider = providerOrder(order, order.packageId);
    try {
      const notice = await provider.query(asProvider);
      if (notice) {
        const applied = await this.applyNotice(notice);
        if (applied.outcome === 'applied') return { orderId, result: 'paid' };
        if (applied.outcome === 'failed') return { orderId, result: 'failed' };
        if (applied.outcome === 'rejected') return { orderId, result: 'error', detail: `${applied.reason}: ${applied.detail}` };
      }
      if (now.getTime() < order.expiresAt.getTime()) return { orderId, result: 'pending' };
      // Close first: once the provider refuses payment for the trade, expiring here cannot lose money.
      await provider.close(asProvider);
      const expired = await this.#expire(orderId, now);
      return expired ? { orderId, result: 'expired' } : { orderId, result: 'unchanged', state: (await this.find(orderId))!.state };
    } catch (error) {
      if (error instanceof ProviderCallError || error instanceof NotificationError) return { orderId, result: 'error', detail: error.message };
      throw error;
    }
  }

  /**
   * Refunds a paid order (or one whose refund failed) in full through its provider: `refunded` when the
   * money is back at once, `refund_pending` while it is on its way, `refund_failed` when the provider gave
   * up (refunds.ts).
   */
  async refund(orderId: string, input: { reason: string; actorId?: string | null; requestId?: string | null }): Promise<OrderView> {
    return this.#refunds.refund(orderId, input);
  }

  /** Deletes stored notices that were not verified once `payments.unverifiedRetentionDays` passed. */
  async purgeUnverifiedNotices(now?: Date): Promise<number> {
    return this.#notices.purgeUnverified(now);
  }

  async #expire(orderId: string, now: Date): Promise<boolean> {
    const expired = await this.#db.orm.em.fork().transactional(async (tx) => {
      const order = await tx.findOne(BillingOrder, { id: orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!order || order.state !== 'created') return null;
      order.state = 'expired';
      order.closedAt = now;
      await tx.flush();
      await this.#hooks.onClosed?.(orderView(order), tx);
      return orderView(order);
    });
    if (expired) await this.#changed(expired, 'created');
    return expired !== null;
  }

  async #changed(order: OrderView, from: OrderState): Promise<void> {
    try {
      await this.#hooks.changed?.(order, from);
    } catch {
      // Committed already; the hook reports its own failures.
    }
  }

  #findPackage(packageId: string): { name: string; prices: Record<string, number> } {
    for (const plan of Object.values(this.#config.plans)) {
      const pkg = plan.packages.find((candidate) => candidate.id === packageId);
      if (pkg) {
        if (Object.keys(pkg.prices).length === 0) throw new AppError('invalid_request', `Package ${packageId} cannot be bought.`, { param: 'packageId' });
        return pkg;
      }
    }
    throw new AppError('invalid_request', `Unknown package ${packageId}.`, { param: 'packageId' });
  }
}

function noticeColumns(notice: PaymentNotice) {
  return {
    provider: notice.provider,
    source: notice.source,
    orderId: notice.orderId,
    eventId: notice.eventId,
    providerTradeNo: notice.providerTradeNo,
    status: notice.status,
    amountMinor: Number.isSafeInteger(notice.amountMinor) && Math.abs(notice.amountMinor) <= 2 ** 31 - 1 ? notice.amountMinor : null,
    currency: /^[A-Z]{3}$/.test(notice.currency) ? notice.currency : null,
    payload: notice.raw,
  };
}

function safeJson(value: unknown): Buffer | null {
  try {
    const json = JSON.stringify(value);
    return json === undefined ? null : Buffer.from(json, 'utf8');
  } catch {
    return null;
  }
}

function localBudget(perMinute: number): UnverifiedBudget {
  const gcra = new LocalGcra();
  return async (provider) => gcra.check([{ key: `billing:unverified:${provider}`, limit: perMinute, periodMs: 60_000 }]).allowed;
}

function orderFacts(order: IBillingOrder): OrderFacts {
  return {
    provider: order.provider,
    state: order.state,
    amountMinor: order.amountMinor,
    currency: order.currency,
    appId: order.appId ?? null,
    merchantId: order.merchantId ?? null,
    providerTradeNo: order.providerTradeNo ?? null,
  };
}

function providerOrder(order: IBillingOrder, packageName: string): ProviderOrder {
  return {
    id: order.id,
    amountMinor: order.amountMinor,
    currency: order.currency,
    description: order.packageId === CREDIT_PACKAGE_ID ? 'svc credit top-up' : `svc ${packageName} — 1 month`,
    createdAt: order.createdAt,
    expiresAt: order.expiresAt,
    providerTradeNo: order.providerTradeNo ?? null,
  };
}

export function orderView(order: IBillingOrder): OrderView {
  return {
    id: order.id,
    accountId: order.accountId,
    placedBy: order.placedBy ?? null,
    // Nobody signs in as an organisation: an order placed by someone else than its account is an organisation's.
    organisationId: order.placedBy && order.placedBy !== order.accountId ? order.accountId : null,
    packageId: order.packageId,
    provider: order.provider,
    state: order.state,
    amountMinor: order.amountMinor,
    amount: formatMinor(order.amountMinor, order.currency),
    listMinor: order.listMinor,
    creditMinor: order.creditMinor,
    currency: order.currency,
    providerTradeNo: order.providerTradeNo ?? null,
    payUrl: order.payUrl ?? null,
    qrCode: order.qrCode ?? null,
    createdAt: order.createdAt,
    expiresAt: order.expiresAt,
    paidAt: order.paidAt ?? null,
    closedAt: order.closedAt ?? null,
    refundedAt: order.refundedAt ?? null,
    refundReason: order.refundReason ?? null,
    refundRequestedAt: order.refundRequestedAt ?? null,
    refundFailure: order.refundFailure ?? null,
    creditVersion: order.creditVersion ?? null,
  };
}
