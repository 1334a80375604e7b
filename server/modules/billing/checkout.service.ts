/**
 * What members and staff do with payments, with the rights checked first (server/authz): members buy a
 * package (priced by the subscription's quote: upgrades carry their credit), read their own orders, pay
 * with the sandbox — for their own account, or as owner or admin for an organisation they name as the
 * payer (payer.ts); staff look orders up by id or provider trade number, ask the provider again, and
 * (admins) refund with a reason. Every order state change is audited (by the billing hooks); the
 * creation and the staff re-query are audited here.
 */
import * as authz from '../../authz/authz.ts';
import type { Database } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { SingleFlight } from '../../infra/single-flight.ts';
import type { AuditLog } from '../audit/audit.service.ts';
import { checkReason } from '../audit/reason.ts';
import { BillingNotice, BillingOrder, orderStates } from './billing.entity.ts';
import { orderView, type BillingOrders, type Checkout, type OrderView, type ReconcileResult } from './billing.service.ts';
import { isPaymentProviderId, paymentProviderIds, type PaymentProviderId } from './providers/provider.ts';
import type { PaymentProviders } from './providers/registry.ts';
import type { BillingPayers } from './payer.ts';
import type { CheckoutQuote, SubscriptionService } from './subscription.service.ts';

export interface CheckoutInput {
  packageId: string;
  provider: string;
  currency: string;
  /** Alipay: `mobile` → wap pay; default desktop page pay. */
  device?: 'desktop' | 'mobile' | null;
  /** The organisation that pays (the caller is its owner or an admin); absent: the caller's own account. */
  organisationId?: string | null;
}

export interface ProviderInfo {
  id: PaymentProviderId;
  enabled: boolean;
  /** What it charges in; null = any currency a package has a price in. */
  currencies: readonly string[] | null;
}

export interface NoticeView {
  id: string;
  createdAt: Date;
  provider: PaymentProviderId;
  source: 'notify' | 'query';
  verified: boolean;
  outcome: string;
  reason: string | null;
  detail: string | null;
  eventId: string | null;
  providerTradeNo: string | null;
  status: string | null;
  amountMinor: number | null;
  currency: string | null;
}

export interface RequeryResult {
  result: ReconcileResult['result'];
  detail: string | null;
  order: OrderView;
}

export const ORDERS_DEFAULT_PAGE = 50;
export const ORDERS_MAX_PAGE = 200;

export class CheckoutService {
  readonly #db: Database;
  readonly #orders: BillingOrders;
  readonly #providers: PaymentProviders;
  readonly #subscriptions: SubscriptionService;
  readonly #audit: AuditLog;
  readonly #payers: BillingPayers;
  readonly #found = new SingleFlight<OrderView | null>();

  constructor(db: Database, deps: { orders: BillingOrders; providers: PaymentProviders; subscriptions: SubscriptionService; audit: AuditLog; payers: BillingPayers }) {
    this.#db = db;
    this.#orders = deps.orders;
    this.#providers = deps.providers;
    this.#subscriptions = deps.subscriptions;
    this.#audit = deps.audit;
    this.#payers = deps.payers;
  }

  /** The payment methods and whether each is on (the checkout page offers the enabled ones). */
  providers(): ProviderInfo[] {
    return this.#providers.status().map((status) => ({ id: status.id, enabled: status.enabled, currencies: this.#providers.get(status.id)?.currencies ?? null }));
  }

  /** What buying `packageId` in `currency` would do and cost now, for the caller or their organisation (`billing:read`). */
  async quote(actor: authz.Actor, packageId: string, currency: string, organisationId: string | null = null): Promise<CheckoutQuote> {
    const { payerId } = await this.#payers.resolve(actor, organisationId, 'read');
    return this.#subscriptions.quote(payerId, packageId, currency);
  }

  /**
   * Creates an order for one month of a package and starts the payment (`billing:manage`), paid by the
   * caller or by the organisation they name (its owner or an admin: `organisation:billing:manage`).
   */
  async checkout(actor: authz.Actor, input: CheckoutInput, options: { requestId?: string | null; returnUrl?: string } = {}): Promise<Checkout> {
    const { actor: buyer, payerId } = await this.#payers.resolve(actor, input.organisationId, 'manage');
    const provider = providerId(input.provider);
    if (typeof input.currency !== 'string' || !/^[A-Z]{3}$/.test(input.currency)) {
      throw new AppError('invalid_request', bilingual('currency must be an ISO 4217 code such as CNY or USD.', 'currency 必须是 ISO 4217 货币代码，例如 CNY 或 USD。'), { param: 'currency' });
    }
    this.#providers.require(provider);
    const quote = await this.#subscriptions.quote(payerId, input.packageId, input.currency);
    const checkout = await this.#orders.create(payerId, input.packageId, provider, input.currency, {
      placedBy: buyer.accountId,
      device: input.device ?? undefined,
      creditMinor: quote.creditMinor,
      creditVersion: quote.creditVersion,
      returnUrl: options.returnUrl,
    });
    await this.#audit.record({
      actorId: buyer.accountId,
      action: 'order:create',
      targetType: 'order',
      targetId: checkout.order.id,
      before: null,
      after: {
        state: checkout.order.state,
        kind: quote.kind,
        accountId: payerId,
        packageId: input.packageId,
        provider,
        amountMinor: checkout.order.amountMinor,
        creditMinor: quote.creditMinor,
        currency: input.currency,
      },
      reason: null,
      requestId: options.requestId ?? null,
    });
    return checkout;
  }

  /** The member's own orders, or their organisation's (owner and admins), newest first (`billing:read`). */
  async orders(actor: authz.Actor, first: number | null = null, organisationId: string | null = null): Promise<OrderView[]> {
    const { payerId } = await this.#payers.resolve(actor, organisationId, 'read');
    return this.#orders.listForAccount(payerId, pageSize(first));
  }

  /**
   * One of the member's own orders, or of an organisation they own or administer; null for anyone else's
   * (`billing:read`). With an `orderUpdated` wake-up's generation, the order's read is shared with its other
   * subscriptions woken with it (`SingleFlight`); whether the caller may see it stays each caller's own.
   */
  async order(actor: authz.Actor, orderId: string, access: 'read' | 'manage' = 'read', generation?: number): Promise<OrderView | null> {
    authz.assert(actor, 'billing:read');
    if (!validOrderId(orderId)) return null;
    const order = await this.#found.run(orderId, generation, () => this.#orders.find(orderId));
    return order && (await this.#payers.may(actor, order.accountId, access)) ? order : null;
  }

  /** The sandbox's pay page: pays or fails the member's own (or their organisation's) sandbox order with a signed notice. */
  async sandboxSettle(actor: authz.Actor, orderId: string, outcome: 'paid' | 'failed'): Promise<OrderView> {
    authz.assert(actor, 'billing:manage');
    const sandbox = this.#providers.sandbox;
    if (!sandbox) this.#providers.require('sandbox');
    const order = await this.order(actor, orderId, 'manage');
    if (!order || order.provider !== 'sandbox') throw new AppError('not_found', bilingual('No sandbox order {id}.', '没有沙盒订单 {id}。', { id: orderId }), { param: 'orderId' });
    if (order.state !== 'created') {
      throw new AppError('invalid_request', bilingual('Order {id} is already {state}.', '订单 {id} 已是 {state} 状态。', { id: orderId, state: order.state }), { param: 'orderId' });
    }
    const handled = await this.#orders.handleNotification('sandbox', sandbox!.signNotice(order, outcome));
    if (handled.result.outcome === 'error') throw handled.result.error;
    return (await this.#orders.find(orderId))!;
  }

  /** Staff: an order by its id, or by the provider's trade number (`order:read`). */
  async staffOrder(actor: authz.Actor, key: string): Promise<OrderView | null> {
    authz.assert(actor, 'order:read');
    const text = String(key ?? '').trim();
    if (!text || text.length > 255) return null;
    const em = this.#db.orm.em.fork();
    const order = (validOrderId(text) ? await em.findOne(BillingOrder, { id: text }) : null) ?? (await em.findOne(BillingOrder, { providerTradeNo: text }));
    return order ? orderView(order) : null;
  }

  /** Staff: orders, newest first, of one account or all (`order:read`). */
  async staffOrders(actor: authz.Actor, filter: { accountId?: string | null; state?: string | null; first?: number | null } = {}): Promise<OrderView[]> {
    authz.assert(actor, 'order:read');
    const where: Record<string, unknown> = {};
    if (filter.accountId) {
      if (!isUuid(filter.accountId)) throw new AppError('invalid_request', bilingual('That is not an account id.', '这不是账户 ID。'), { param: 'accountId' });
      where.accountId = filter.accountId;
    }
    if (filter.state) {
      if (!(orderStates as readonly string[]).includes(filter.state)) {
        throw new AppError('invalid_request', bilingual('state must be one of {states}.', 'state 必须是 {states} 之一。', { states: orderStates.join(', ') }), { param: 'state' });
      }
      where.state = filter.state;
    }
    const rows = await this.#db.orm.em.fork().find(BillingOrder, where, { orderBy: { createdAt: 'desc' }, limit: pageSize(filter.first ?? null) });
    return rows.map(orderView);
  }

  /** Staff: every notification and query answer stored for an order, oldest first (`order:read`). */
  async staffNotices(actor: authz.Actor, orderId: string): Promise<NoticeView[]> {
    authz.assert(actor, 'order:read');
    const rows = await this.#db.orm.em.fork().find(BillingNotice, { orderId }, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 200 });
    return rows.map((row) => ({
      id: row.id,
      createdAt: row.createdAt,
      provider: row.provider,
      source: row.source,
      verified: row.verified,
      outcome: row.outcome,
      reason: row.reason ?? null,
      detail: row.detail ?? null,
      eventId: row.eventId ?? null,
      providerTradeNo: row.providerTradeNo ?? null,
      status: row.status ?? null,
      amountMinor: row.amountMinor ?? null,
      currency: row.currency ?? null,
    }));
  }

  /** Staff: asks the provider about one order now (a lost notification is applied; an old one expires). */
  async requery(actor: authz.Actor, orderId: string, options: { requestId?: string | null } = {}): Promise<RequeryResult> {
    authz.assert(actor, 'order:requery');
    const before = validOrderId(orderId) ? await this.#orders.find(orderId) : null;
    if (!before) throw new AppError('not_found', bilingual('No order {id}.', '没有订单 {id}。', { id: orderId }), { param: 'id' });
    const result = await this.#orders.reconcileOrder(orderId);
    const order = (await this.#orders.find(orderId))!;
    await this.#audit.record({
      actorId: actor.accountId,
      action: 'order:requery',
      targetType: 'order',
      targetId: orderId,
      before: { state: before.state },
      after: { state: order.state, result: result.result },
      reason: null,
      requestId: options.requestId ?? null,
    });
    return { result: result.result, detail: 'detail' in result ? result.detail : null, order };
  }

  /** Admin: refunds a paid order in full through its provider, with a reason (`order:refund`). */
  async refund(actor: authz.Actor, orderId: string, input: { reason: unknown; requestId?: string | null }): Promise<OrderView> {
    authz.assert(actor, 'order:refund');
    const reason = checkReason(input.reason);
    if (!validOrderId(orderId)) throw new AppError('not_found', bilingual('No order {id}.', '没有订单 {id}。', { id: orderId }), { param: 'id' });
    return this.#orders.refund(orderId, { reason, actorId: actor.accountId, requestId: input.requestId ?? null });
  }
}

function providerId(value: unknown): PaymentProviderId {
  if (typeof value === 'string' && isPaymentProviderId(value)) return value;
  throw new AppError('invalid_request', bilingual('provider must be one of {providers}.', 'provider 必须是 {providers} 之一。', { providers: paymentProviderIds.join(', ') }), { param: 'provider' });
}

function validOrderId(value: string): boolean {
  return typeof value === 'string' && /^[A-Za-z0-9]{1,32}$/.test(value);
}

function pageSize(first: number | null): number {
  const size = first ?? ORDERS_DEFAULT_PAGE;
  if (!Number.isInteger(size) || size < 1 || size > ORDERS_MAX_PAGE) {
    throw new AppError('invalid_request', bilingual('first must be an integer from 1 to {max}.', 'first 必须是 1 到 {max} 之间的整数。', { max: ORDERS_MAX_PAGE }), { param: 'first' });
  }
  return size;
}
