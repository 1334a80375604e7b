/**
 * Refunds (DESIGN §8.6, issue 46). Staff (admins) refund a paid order in full; the provider either returns
 * the money at once (`refunded`), accepts the refund with the money still on its way (WeChat Pay
 * `PROCESSING`, a pending Stripe refund: `refund_pending`), or gives it up (WeChat Pay `CLOSED` /
 * `ABNORMAL`: `refund_failed`, shown to staff, who may refund again under a new refund id). A pending
 * refund is settled by the provider's refund notice or by reconciliation asking the provider; only then is
 * the order `refunded` and the month it bought taken back (`onRefunded`). Each attempt's id is
 * `<order id>R<attempt>`, stable across retries of the same attempt, so the provider refunds it once.
 */
import { LockMode } from '@mikro-orm/core';
import type { Database, Em } from '../../db/orm.ts';
import { AppError } from '../../errors/app-error.ts';
import { BillingOrder, type IBillingOrder, type NoticeOutcome, type OrderState } from './billing.entity.ts';
import { decideRefund, type RefundFacts } from './notice-rules.ts';
import type { Evidence, NoticeStore } from './notice-store.ts';
import { NotificationError, ProviderCallError, type ProviderOrder, type RefundNotice, type RefundResult } from './providers/provider.ts';
import type { PaymentProviders } from './providers/registry.ts';

/** The order as the billing service shows it; what `BillingOrders` shares with this module. */
export interface RefundDeps<View extends { state: OrderState }> {
  db: Database;
  providers: PaymentProviders;
  notices: NoticeStore;
  now: () => number;
  view: (order: IBillingOrder) => View;
  asProvider: (order: IBillingOrder) => ProviderOrder;
  hooks: {
    /** Inside the transaction that marks the order refunded (the money is back). */
    onRefunded?(order: View, tx: Em, context: RefundContext): Promise<void>;
    /** Inside the transaction that moves the order to `refund_pending` or `refund_failed`. */
    onRefundUpdated?(order: View, tx: Em, context: RefundContext): Promise<void>;
  };
  /** After the transaction committed: live updates, mail. */
  changed(order: View, from: OrderState): Promise<void>;
}

/** Who asked (staff, or null when the provider said so), why, and the state the order left. */
export interface RefundContext {
  actorId: string | null;
  reason: string | null;
  requestId: string | null;
  from: OrderState;
}

export type RefundNoticeResult<View> =
  | { outcome: 'refunded' | 'refund_failed' | 'pending' | 'duplicate'; order: View }
  | { outcome: 'ignored'; reason: string; order: View | null }
  | { outcome: 'rejected'; reason: string; detail: string; order: View | null };

export type RefundReconcileResult = 'refunded' | 'refund_failed' | 'pending';

const refundableStates: readonly OrderState[] = ['paid', 'refund_failed'];

export class Refunds<View extends { state: OrderState }> {
  readonly #deps: RefundDeps<View>;

  constructor(deps: RefundDeps<View>) {
    this.#deps = deps;
  }

  /**
   * Asks the order's provider to return the money (a paid order, or one whose last refund failed), and
   * records what it answered: `refunded`, `refund_pending` or `refund_failed`.
   */
  async refund(orderId: string, input: { reason: string; actorId?: string | null; requestId?: string | null }): Promise<View> {
    const reason = input.reason.trim();
    if (!reason) throw new AppError('invalid_request', 'A refund needs a reason.', { param: 'reason' });
    let from: OrderState = 'paid';
    const done = await this.#deps.db.orm.em.fork().transactional(async (tx) => {
      const order = await tx.findOne(BillingOrder, { id: orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!order) throw new AppError('not_found', `No order ${orderId}.`);
      if (!refundableStates.includes(order.state)) {
        throw new AppError('order_not_refundable', `Order ${orderId} is ${order.state}; only a paid order (or one whose refund failed) can be refunded.`);
      }
      from = order.state;
      const provider = this.#deps.providers.require(order.provider);
      const refundId = nextRefundId(order);
      let answer: RefundResult;
      try {
        answer = await provider.refund(this.#deps.asProvider(order), { refundId, amountMinor: order.amountMinor, reason });
      } catch (error) {
        throw new AppError('payment_provider_error', `${order.provider} did not accept the refund.`, { cause: error });
      }
      order.refundId = refundId;
      order.refundReason = reason;
      order.refundRequestedAt = new Date(this.#deps.now());
      order.providerRefundId = answer.providerRefundId;
      order.refundFailure = null;
      await this.#move(tx, order, answer.status, answer.providerStatus ?? null, { actorId: input.actorId ?? null, reason, requestId: input.requestId ?? null, from });
      return this.#deps.view(order);
    });
    await this.#deps.changed(done, from);
    return done;
  }

  /** Applies a verified refund notice (or query answer) in one transaction; idempotent like payments. */
  async apply(notice: RefundNotice, evidence: Evidence): Promise<RefundNoticeResult<View>> {
    // Order ids are letters and digits: anything else names no order, and is not sent to the database.
    const knowable = /^[A-Za-z0-9]{1,32}$/.test(notice.orderId);
    let from: OrderState = 'paid';
    const result = await this.#deps.db.orm.em.fork().transactional(async (tx): Promise<RefundNoticeResult<View>> => {
      const order = knowable ? await tx.findOne(BillingOrder, { id: notice.orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
      const decision = decideRefund(order ? refundFacts(order) : null, notice);
      let result: RefundNoticeResult<View>;
      let outcome: NoticeOutcome;
      switch (decision.kind) {
        case 'refunded':
        case 'refund_failed': {
          const settled = order!;
          from = settled.state;
          // A success under the next attempt's id (its answer was lost) becomes the latest attempt.
          settled.refundId = notice.refundId;
          settled.providerRefundId = notice.providerRefundId ?? settled.providerRefundId;
          const context = { actorId: null, reason: settled.refundReason ?? null, requestId: null, from };
          await this.#move(tx, settled, decision.kind === 'refunded' ? 'succeeded' : 'failed', notice.providerStatus, context);
          result = { outcome: decision.kind, order: this.#deps.view(settled) };
          outcome = decision.kind;
          break;
        }
        case 'pending':
        case 'duplicate':
          result = { outcome: decision.kind, order: this.#deps.view(order!) };
          outcome = decision.kind;
          break;
        case 'ignore':
          result = { outcome: 'ignored', reason: decision.reason, order: order ? this.#deps.view(order) : null };
          outcome = 'ignored';
          break;
        case 'reject':
          result = { outcome: 'rejected', reason: decision.reason, detail: decision.detail, order: order ? this.#deps.view(order) : null };
          outcome = 'rejected';
          break;
      }
      // Reconciliation asks every few minutes; an unchanged answer is not worth a row each time.
      if (!(notice.source === 'query' && (outcome === 'pending' || outcome === 'duplicate'))) {
        await this.#deps.notices.store(tx, {
          provider: notice.provider,
          source: notice.source,
          verified: true,
          outcome,
          reason: result.outcome === 'ignored' ? 'no_order_change' : result.outcome === 'rejected' ? result.reason : null,
          detail: result.outcome === 'ignored' ? result.reason : result.outcome === 'rejected' ? result.detail : null,
          orderId: notice.orderId,
          eventId: notice.eventId,
          providerTradeNo: null,
          status: refundNoticeStatus(notice),
          amountMinor: Number.isSafeInteger(notice.amountMinor) && notice.amountMinor <= 2 ** 31 - 1 ? notice.amountMinor : null,
          // Refunds return the order's currency; WeChat Pay's refund notices do not repeat it.
          currency: order?.currency ?? null,
          payload: notice.raw,
          evidence,
        });
      }
      return result;
    });
    if (result.outcome === 'refunded' || result.outcome === 'refund_failed') await this.#deps.changed(result.order, from);
    return result;
  }

  /** Asks the provider where a `refund_pending` order's refund is, and applies the answer. */
  async reconcile(order: IBillingOrder): Promise<{ result: RefundReconcileResult | 'skipped' | 'error'; detail?: string }> {
    const provider = this.#deps.providers.get(order.provider);
    if (!provider) return { result: 'skipped', detail: `provider ${order.provider} is off` };
    if (!provider.queryRefund || !order.refundId) return { result: 'skipped', detail: `${order.provider} cannot be asked about refunds` };
    try {
      const notice = await provider.queryRefund(this.#deps.asProvider(order), { refundId: order.refundId, providerRefundId: order.providerRefundId ?? null });
      if (!notice) return { result: 'error', detail: `${order.provider} knows no refund ${order.refundId}` };
      const applied = await this.apply(notice, { headers: null, body: jsonBytes(notice.raw) });
      if (applied.outcome === 'refunded' || applied.outcome === 'refund_failed') return { result: applied.outcome };
      if (applied.outcome === 'rejected') return { result: 'error', detail: `${applied.reason}: ${applied.detail}` };
      return { result: 'pending' };
    } catch (error) {
      if (error instanceof ProviderCallError || error instanceof NotificationError) return { result: 'error', detail: error.message };
      throw error;
    }
  }

  /** Moves the order as the provider said, inside `tx`, and runs the matching hook. */
  async #move(tx: Em, order: IBillingOrder, status: RefundResult['status'], providerStatus: string | null, context: RefundContext): Promise<void> {
    switch (status) {
      case 'succeeded':
        order.state = 'refunded';
        order.refundedAt = new Date(this.#deps.now());
        order.refundFailure = null;
        await tx.flush();
        await this.#deps.hooks.onRefunded?.(this.#deps.view(order), tx, context);
        return;
      case 'pending':
        order.state = 'refund_pending';
        await tx.flush();
        await this.#deps.hooks.onRefundUpdated?.(this.#deps.view(order), tx, context);
        return;
      case 'failed':
        order.state = 'refund_failed';
        order.failedRefunds += 1;
        order.refundFailure = providerStatus || 'failed';
        await tx.flush();
        await this.#deps.hooks.onRefundUpdated?.(this.#deps.view(order), tx, context);
        return;
    }
  }
}

/** The id of the next refund attempt: a retry of the same attempt reuses it, so the provider refunds once. */
function nextRefundId(order: IBillingOrder): string {
  return `${order.id}R${order.failedRefunds + 1}`;
}

function refundFacts(order: IBillingOrder): RefundFacts {
  return {
    provider: order.provider,
    state: order.state,
    amountMinor: order.amountMinor,
    merchantId: order.merchantId ?? null,
    refundId: order.refundId ?? null,
    nextRefundId: nextRefundId(order),
  };
}

function refundNoticeStatus(notice: RefundNotice): string {
  return notice.status === 'succeeded' ? 'refunded' : notice.status === 'failed' ? 'refund_failed' : 'refund_pending';
}

function jsonBytes(value: unknown): Buffer | null {
  try {
    const json = JSON.stringify(value);
    return json === undefined ? null : Buffer.from(json, 'utf8');
  } catch {
    return null;
  }
}
