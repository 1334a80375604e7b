/**
 * Subscriptions: what a paid order does to an account's term (DESIGN §8.6), with the money math of
 * subscription-math.ts.
 *   - a paid order starts a one-month term, or extends the current one by a month (same package);
 *   - a more expensive package starts at once: the unused part of the current period is credited pro rata
 *     at checkout (`quote`), and the order remembers the term version it was computed from;
 *   - a cheaper package and a cancellation wait for the period end; `resume` undoes a cancellation;
 *   - at the period end a job (`runPeriodEnd`, every minute on every instance, rows taken with SKIP LOCKED)
 *     starts the queued package or returns the account to Free.
 * `hooks.onPaid` runs inside the payment's transaction: the term and `account.plan_package` change with
 * the order, or not at all (the package through `PlanAssignments.assignWithin`, its one writer). After
 * commit, every instance is told (credentials and live usage), the receipt is mailed and the order's
 * watchers are woken (`hooks.changed`).
 *
 * Locks are always taken account row first, then the subscription row, whatever the path (payment,
 * cancel, period end), so two instances never deadlock on them.
 */
import { LockMode } from '@mikro-orm/core';
import type { Logger } from 'pino';
import type * as authz from '../../authz/authz.ts';
import type { Config } from '../../config/config.ts';
import { formatMinor } from '../../config/money.ts';
import type { Database, Em } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { isLocale, type Locale } from '../../i18n/locale.ts';
import { Account } from '../account/account.entity.ts';
import type { Mailer } from '../account/mailer.ts';
import type { AuditLog } from '../audit/audit.service.ts';
import type { PlanAssignments } from '../plan/plan-assignment.service.ts';
import { planIds } from '../plan/entitlements.ts';
import type { BillingHooks, ChangeContext, OrderView } from './billing.service.ts';
import type { AuditAction, AuditFields } from '../audit/audit.vocabulary.ts';
import type { OrderState } from './billing.entity.ts';
import { receiptMail, refundMail } from './billing.mail.ts';
import type { BillingPayers } from './payer.ts';
import { BillingSubscription, type IBillingSubscription } from './subscription.entity.ts';
import { addMonths, toLocal } from '../../infra/calendar.ts';
import {
  advance,
  applyUpgrade,
  cancelAtPeriodEnd,
  extendTerm,
  purchaseKind,
  resume as resumeTerm,
  scheduleDowngrade,
  startTerm,
  subscriptionState,
  unusedCreditMinor,
  upgradeQuote,
  worthEnd,
  type PurchaseKind,
  type SubscriptionState,
  type Term,
} from './subscription-math.ts';

export interface SubscriptionView {
  packageId: string;
  /** free, pro or max. */
  planId: string;
  state: SubscriptionState;
  currency: string;
  /** Paid for the current period, in minor units of `currency`. */
  paidMinor: number;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
  /** A cheaper package already paid for, starting at `currentPeriodEnd`. */
  nextPackageId: string | null;
}

export interface CheckoutQuote {
  kind: PurchaseKind;
  packageId: string;
  currency: string;
  /** The package's price in `currency`. */
  listMinor: number;
  /** Unused time of the current period credited against the price (upgrades). */
  creditMinor: number;
  /** What the order charges: `listMinor − creditMinor` (at least one minor unit). */
  amountDueMinor: number;
  /** The term version the credit comes from (null without credit). */
  creditVersion: number | null;
  /** When the bought package starts: now, or the current period end (downgrades, extensions). */
  startsAt: Date;
}

export interface SubscriptionDeps {
  audit: AuditLog;
  planAssignments: PlanAssignments;
  mailer: Mailer;
  log: Logger;
  /** Whose term a caller may read or change: their own, or their organisation's (owner and admins). */
  payers: BillingPayers;
  /** Told when an order's state changed (after commit): the `orderUpdated` watchers. */
  orderChanged?: (order: OrderView) => void;
}

interface PackageInfo {
  planId: string;
  name: string;
  prices: Record<string, number>;
  rank: number;
}

export class SubscriptionService {
  readonly #config: Config;
  readonly #db: Database;
  readonly #deps: SubscriptionDeps;
  readonly #now: () => number;
  readonly #timeZone: string;
  readonly #freePackage: string;
  readonly #packages = new Map<string, PackageInfo>();

  constructor(config: Config, db: Database, deps: SubscriptionDeps, options: { now?: () => number } = {}) {
    this.#config = config;
    this.#db = db;
    this.#deps = deps;
    this.#now = options.now ?? Date.now;
    this.#timeZone = config.timezone;
    this.#freePackage = config.plans.free.packages[0]!.id;
    planIds.forEach((planId, planIndex) => {
      for (const pkg of config.plans[planId].packages) {
        this.#packages.set(pkg.id, { planId, name: pkg.name, prices: pkg.prices, rank: planIndex * 1_000_000 + pkg.multiplier });
      }
    });
  }

  /** What the billing library calls inside its transactions, and after they commit. */
  readonly hooks: BillingHooks = {
    onPaid: (order, tx) => this.#onPaid(order, tx),
    onRefunded: (order, tx, context) => this.#onRefunded(order, tx, context),
    onRefundUpdated: (order, tx, context) => this.#onRefundUpdated(order, tx, context),
    onClosed: (order, tx) => this.#onClosed(order, tx),
    changed: (order, from) => this.#changed(order, from),
  };

  /** A package's checkout prices (config `packages[].prices`), in minor units; empty when it cannot be bought. */
  prices(packageId: string): { currency: string; amountMinor: number }[] {
    return Object.entries(this.#packages.get(packageId)?.prices ?? {}).map(([currency, amountMinor]) => ({ currency, amountMinor }));
  }

  /** The member's own term, or their organisation's (`billing:read`); null when the account never paid. */
  async mine(actor: authz.Actor, organisationId: string | null = null): Promise<SubscriptionView | null> {
    const { payerId } = await this.#deps.payers.resolve(actor, organisationId, 'read');
    return this.view(payerId);
  }

  /** An account's term as it stands now (a term past its end shows what the period-end job will make of it). */
  async view(accountId: string, now = new Date(this.#now())): Promise<SubscriptionView | null> {
    const row = await this.#db.orm.em.fork().findOne(BillingSubscription, { accountId });
    if (!row) return null;
    if (row.endedAt) return this.#viewOf(toTerm(row), 'expired');
    const current = this.#advance(row, now);
    return current ? this.#viewOf(current, subscriptionState(current, now)) : this.#viewOf(toTerm(row), 'expired');
  }

  /**
   * What buying one month of `packageId` in `currency` does now: start, extend, upgrade (with credit) or
   * downgrade (at period end), and what it costs. Refuses what cannot be bought.
   */
  async quote(accountId: string, packageId: string, currency: string, now = new Date(this.#now())): Promise<CheckoutQuote> {
    const pkg = this.#packages.get(packageId);
    if (!pkg || Object.keys(pkg.prices).length === 0) {
      const buyable = [...this.#packages].filter(([, info]) => Object.keys(info.prices).length > 0).map(([id]) => id);
      throw new AppError('invalid_request', bilingual('Package {id} cannot be bought; the packages on sale are {known}.', '套餐 {id} 无法购买；可购买的套餐有 {known}。', { id: JSON.stringify(packageId), known: buyable.join(', ') }), { param: 'packageId' });
    }
    const listMinor = Object.hasOwn(pkg.prices, currency) ? pkg.prices[currency] : undefined;
    if (listMinor === undefined) {
      throw new AppError('invalid_request', bilingual('Package {id} has no price in {currency}; it is sold in {currencies}.', '套餐 {id} 没有 {currency} 价格；可用币种为 {currencies}。', { id: packageId, currency: JSON.stringify(currency), currencies: Object.keys(pkg.prices).join(', ') }), { param: 'currency' });
    }
    const row = await this.#db.orm.em.fork().findOne(BillingSubscription, { accountId });
    const term = row && !row.endedAt ? this.#advance(row, now) : null;
    const kind = purchaseKind(term, packageId, now, (id) => this.#rank(id));
    const base = { kind, packageId, currency, listMinor, creditMinor: 0, amountDueMinor: listMinor, creditVersion: null, startsAt: now };
    if (!term || kind === 'start') return base;
    if (kind === 'downgrade') {
      if (term.next) {
        throw new AppError('invalid_request', bilingual('A change to {next} already starts at the end of this period ({end}); buy again after it started.', '本周期结束（{end}）时已安排切换到 {next}；请在其生效后再购买。', { next: term.next.packageId, end: term.periodEnd.toISOString() }), { param: 'packageId' });
      }
      return { ...base, startsAt: term.periodEnd };
    }
    if (term.currency !== currency) {
      throw new AppError('invalid_request', bilingual('Your current period was paid in {paid}; pay this in {paid} too (or after the period ends on {end}).', '当前周期以 {paid} 支付；请同样以 {paid} 支付（或在 {end} 周期结束后再购买）。', { paid: term.currency, end: term.periodEnd.toISOString() }), { param: 'currency' });
    }
    if (kind === 'extend') return { ...base, startsAt: term.periodEnd };
    // Upgrade: the unused time is credited; at least one minor unit is charged (a provider takes no 0.00
    // payment), and whatever credit exceeds the price lengthens the new period when it is paid.
    const { amountDueMinor } = upgradeQuote(term, { priceMinor: listMinor, currency }, now, { minimumDueMinor: 1 });
    return { ...base, creditMinor: listMinor - amountDueMinor, amountDueMinor, creditVersion: row!.version };
  }

  /** Cancels at period end (`billing:manage`): the package stays until then, and nothing is bought after. */
  async cancel(actor: authz.Actor, options: { requestId?: string | null; organisationId?: string | null } = {}): Promise<SubscriptionView> {
    const { actor: who, payerId } = await this.#deps.payers.resolve(actor, options.organisationId, 'manage');
    return this.#setCancel(payerId, true, options.requestId ?? null, who.accountId);
  }

  /** Undoes a cancellation before the period ends (`billing:manage`). */
  async resume(actor: authz.Actor, options: { requestId?: string | null; organisationId?: string | null } = {}): Promise<SubscriptionView> {
    const { actor: who, payerId } = await this.#deps.payers.resolve(actor, options.organisationId, 'manage');
    return this.#setCancel(payerId, false, options.requestId ?? null, who.accountId);
  }

  /**
   * Ends the terms that are due: the queued package starts, or the account returns to Free. Safe on
   * every instance at once (each due row is taken by one of them, SKIP LOCKED). Returns how many changed.
   */
  async runPeriodEnd(now = new Date(this.#now()), limit = 200): Promise<number> {
    const due = await this.#db.orm.em
      .fork()
      .find(BillingSubscription, { endedAt: null, periodEnd: { $lte: now } }, { orderBy: { periodEnd: 'asc' }, limit, fields: ['accountId'] });
    let changed = 0;
    for (const { accountId } of due) {
      const moved = await this.#db.orm.em.fork().transactional(async (tx) => {
        // Account first, then the subscription (the order every path locks in); skip what another instance holds.
        const locked = await tx
          .getConnection()
          .execute<{ id: string }[]>('select "id" from "account" where "id" = ? for update skip locked', [accountId], 'all', tx.getTransactionContext());
        if (locked.length === 0) return false;
        const row = await tx.findOne(BillingSubscription, { accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!row || row.endedAt || row.periodEnd.getTime() > now.getTime()) return false;
        const before = termAudit(toTerm(row));
        const current = this.#advance(row, now);
        if (!current) {
          row.endedAt = row.periodEnd;
          await tx.flush();
          await this.#syncAccount(tx, accountId, null, 'The subscription period ended.', row.packageId);
          await this.#audit(tx, 'subscription:expire', accountId, before, { packageId: this.#freePackage }, null);
        } else {
          this.#store(row, current, null);
          await tx.flush();
          await this.#syncAccount(tx, accountId, current, 'The package paid for the next period started.');
          await this.#audit(tx, 'subscription:renew', accountId, before, termAudit(current), null);
        }
        return true;
      });
      if (moved) {
        changed += 1;
        await this.#announce(accountId);
      }
    }
    return changed;
  }

  #viewOf(term: Term, state: SubscriptionState): SubscriptionView {
    return {
      packageId: term.packageId,
      planId: this.#packages.get(term.packageId)?.planId ?? 'free',
      state,
      currency: term.currency,
      paidMinor: term.paidMinor,
      currentPeriodStart: term.periodStart,
      currentPeriodEnd: term.periodEnd,
      cancelAtPeriodEnd: term.cancelAtPeriodEnd,
      nextPackageId: term.next?.packageId ?? null,
    };
  }

  #rank(packageId: string): number {
    return this.#packages.get(packageId)?.rank ?? 0;
  }

  /** The row's term at `now`: the queued package (all its months) once the period ended; null when over. */
  #advance(row: IBillingSubscription, now: Date): Term | null {
    const term = toTerm(row);
    if (now.getTime() < term.periodEnd.getTime()) return term;
    if (!term.next) return null;
    let current = advance(term, term.periodEnd, this.#timeZone)!;
    for (let month = 1; month < row.nextMonths; month++) {
      current = { ...extendTerm(current, 0, this.#timeZone), cancelAtPeriodEnd: current.cancelAtPeriodEnd };
    }
    return now.getTime() < current.periodEnd.getTime() ? current : null;
  }

  #store(row: IBillingSubscription, term: Term, orderId: string | null): void {
    const worthChanged = row.packageId !== term.packageId || row.paidMinor !== term.paidMinor || row.periodEnd.getTime() !== term.periodEnd.getTime();
    row.packageId = term.packageId;
    row.currency = term.currency;
    row.paidMinor = term.paidMinor;
    row.periodStart = term.periodStart;
    row.periodEnd = term.periodEnd;
    row.anchorDay = term.anchorDay;
    row.cancelAtPeriodEnd = term.cancelAtPeriodEnd;
    if (!term.next) row.nextMonths = 1;
    row.nextPackageId = term.next?.packageId ?? null;
    row.nextPaidMinor = term.next?.paidMinor ?? null;
    row.nextCurrency = term.next?.currency ?? null;
    row.endedAt = null;
    if (orderId) row.lastOrderId = orderId;
    if (worthChanged) row.version += 1;
  }

  /** A paid order, inside its transaction: the term it buys, stored, audited, and the account put on its package. */
  async #onPaid(order: OrderView, tx: Em): Promise<void> {
    const at = order.paidAt ?? new Date(this.#now());
    await tx.findOneOrFail(Account, { id: order.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const row = await tx.findOne(BillingSubscription, { accountId: order.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const term = row && !row.endedAt ? this.#advance(row, at) : null;
    const before = row ? termAudit(toTerm(row)) : null;
    const kind = purchaseKind(term, order.packageId, at, (id) => this.#rank(id));
    const creditStillValid = row !== null && order.creditVersion !== null && order.creditVersion === row.version;
    const { next, queuedMonth } = this.#termBought(kind, order, term, creditStillValid, at);
    if (row) this.#storePaid(row, term, next, order, queuedMonth);
    else createSubscription(tx, order, next, at);
    await tx.flush();
    await this.#audit(tx, 'order:paid', order.id, { state: 'created' }, orderAudit(order), null, 'order');
    await this.#audit(tx, `subscription:${kind}`, order.accountId, before, termAudit(next), `Order ${order.id} paid.`);
    await this.#syncAccount(tx, order.accountId, next, `Order ${order.id} paid (${kind}).`);
  }

  /**
   * The term a paid order makes of `term` (the current one at `at`, or null). `queuedMonth`: a second
   * downgrade paid for the same period end (two tabs), which queues one more month of the next package.
   */
  #termBought(kind: PurchaseKind, order: OrderView, term: Term | null, creditStillValid: boolean, at: Date): { next: Term; queuedMonth: boolean } {
    switch (kind) {
      case 'start': {
        const next = startTerm({ packageId: order.packageId, paidMinor: order.amountMinor, currency: order.currency, at }, this.#timeZone);
        // An upgrade order whose term ran out before it was paid buys what its amount is worth.
        if (order.amountMinor === order.listMinor) return { next, queuedMonth: false };
        return { next: { ...next, periodEnd: worthEnd(at, order.amountMinor, order.listMinor, this.#timeZone, next.anchorDay) }, queuedMonth: false };
      }
      case 'extend': {
        const current = term!;
        const next = extendTerm(current, current.currency === order.currency ? order.amountMinor : 0, this.#timeZone);
        if (order.amountMinor === order.listMinor) return { next, queuedMonth: false };
        return { next: { ...next, periodEnd: worthEnd(current.periodEnd, order.amountMinor, order.listMinor, this.#timeZone, current.anchorDay) }, queuedMonth: false };
      }
      case 'upgrade':
        return { next: this.#upgraded(term!, order, creditStillValid, at), queuedMonth: false };
      case 'downgrade': {
        const current = term!;
        if (current.next) return { next: current, queuedMonth: true };
        return { next: scheduleDowngrade(current, { packageId: order.packageId, paidMinor: order.amountMinor, currency: order.currency }), queuedMonth: false };
      }
    }
  }

  /**
   * An upgrade, at once. The credit is the one priced at checkout when the term is still the one it was
   * computed from (never less than it was then); otherwise the unused part of the term as it is now, which
   * nothing credited yet. Paid short of the price (the term changed before the payment), it buys what it is worth.
   */
  #upgraded(current: Term, order: OrderView, creditStillValid: boolean, at: Date): Term {
    const credit =
      current.currency !== order.currency ? 0 : creditStillValid ? Math.max(order.creditMinor, unusedCreditMinor(current, order.createdAt)) : unusedCreditMinor(current, at);
    const value = order.amountMinor + credit;
    if (value >= order.listMinor) {
      const quote = { creditMinor: credit, amountDueMinor: order.amountMinor, surplusMinor: value - order.listMinor };
      return applyUpgrade(current, { packageId: order.packageId, priceMinor: order.listMinor, quote, at }, this.#timeZone);
    }
    const periodEnd = worthEnd(at, value, order.listMinor, this.#timeZone);
    return { ...current, packageId: order.packageId, paidMinor: value, periodStart: at, periodEnd, anchorDay: toLocal(periodEnd, this.#timeZone).day, cancelAtPeriodEnd: false };
  }

  /** Writes a paid term to the account's existing row (`queuedMonth`: one more month of the queued package). */
  #storePaid(row: IBillingSubscription, term: Term | null, next: Term, order: OrderView, queuedMonth: boolean): void {
    if (row.endedAt || !term) row.nextMonths = 1;
    this.#store(row, next, order.id);
    if (queuedMonth) {
      row.nextMonths += 1;
      row.nextPaidMinor = (row.nextPaidMinor ?? 0) + order.amountMinor;
      row.version += 1;
    }
  }

  async #onRefunded(order: OrderView, tx: Em, context: ChangeContext): Promise<void> {
    await this.#audit(tx, 'order:refund', order.id, { state: context.from ?? 'paid' }, orderAudit(order), context.reason, 'order', context.actorId, context.requestId);
    // The refunded month is taken back: from the queued package if that is what it bought, else from the
    // end of the current period (at once back to Free when nothing is left).
    await tx.findOneOrFail(Account, { id: order.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const row = await tx.findOne(BillingSubscription, { accountId: order.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!row || row.endedAt) return;
    const now = new Date(this.#now());
    const term = this.#advance(row, now);
    if (!term) return;
    const before = termAudit(term);
    let next: Term | null;
    if (term.next && term.next.packageId === order.packageId) {
      if (row.nextMonths > 1) {
        row.nextMonths -= 1;
        row.nextPaidMinor = Math.max(0, (row.nextPaidMinor ?? 0) - order.amountMinor);
        next = term;
      } else {
        next = { ...term, next: null };
      }
    } else if (term.packageId === order.packageId && (order.id === row.lastOrderId || (order.paidAt !== null && order.paidAt.getTime() >= term.periodStart.getTime()))) {
      // Only a month of the running term: an order of a term that already ended was used up.
      const end = addMonths(term.periodEnd, -1, this.#timeZone, term.anchorDay);
      next = end.getTime() <= now.getTime() ? null : { ...term, periodEnd: end, paidMinor: Math.max(0, term.paidMinor - (term.currency === order.currency ? order.amountMinor : 0)) };
    } else {
      return;
    }
    if (next) {
      this.#store(row, next, null);
    } else {
      row.endedAt = now;
      row.periodEnd = now;
      row.version += 1;
    }
    await tx.flush();
    await this.#audit(tx, 'subscription:refund', order.accountId, before, next ? termAudit(next) : { packageId: this.#freePackage }, context.reason, 'account', context.actorId, context.requestId);
    await this.#syncAccount(tx, order.accountId, next, `Order ${order.id} was refunded.`, next ? undefined : term.packageId, context.actorId, context.requestId);
  }

  /** A refund asked for and still on its way, or given up by the provider: audited; the package stays. */
  async #onRefundUpdated(order: OrderView, tx: Em, context: ChangeContext): Promise<void> {
    const action = order.state === 'refund_pending' ? 'order:refund-request' : 'order:refund-fail';
    const after = { ...orderAudit(order), ...(order.refundFailure ? { refundFailure: order.refundFailure } : {}) };
    await this.#audit(tx, action, order.id, { state: context.from ?? 'paid' }, after, context.reason, 'order', context.actorId, context.requestId);
  }

  async #onClosed(order: OrderView, tx: Em): Promise<void> {
    await this.#audit(tx, `order:${order.state === 'failed' ? 'fail' : 'expire'}`, order.id, { state: 'created' }, { state: order.state }, null, 'order');
  }

  async #changed(order: OrderView, _from: OrderState): Promise<void> {
    if (order.state === 'paid' || order.state === 'refunded') {
      // Every instance drops the account's cached credentials before the provider hears "ok".
      await this.#announce(order.accountId).catch((error: unknown) => this.#deps.log.warn({ err: (error as Error).message, orderId: order.id }, 'package change announcement failed'));
      // The receipt does not hold the ack up.
      void this.#mail(order).catch((error: unknown) => this.#deps.log.warn({ err: (error as Error).message, orderId: order.id }, 'receipt not sent'));
    }
    this.#deps.orderChanged?.(order);
  }

  async #announce(accountId: string): Promise<void> {
    await this.#deps.planAssignments.announce([accountId]);
  }

  async #mail(order: OrderView): Promise<void> {
    const em = this.#db.orm.em.fork();
    const payer = await em.findOne(Account, { id: order.accountId }, { fields: ['email', 'locale', 'kind'] });
    // An organisation has no mailbox: its receipt goes to the owner or admin who paid.
    const forOrganisation = payer?.kind === 'organisation';
    const account = forOrganisation ? (order.placedBy ? await em.findOne(Account, { id: order.placedBy }, { fields: ['email', 'locale'] }) : null) : payer;
    if (!account) return;
    const locale: Locale = isLocale(account.locale) ? account.locale : 'en';
    const pkg = this.#packages.get(order.packageId);
    const subscription = await this.view(order.accountId);
    const values = {
      orderId: order.id,
      packageName: pkg?.name ?? order.packageId,
      amount: `${order.currency} ${formatMinor(order.amountMinor, order.currency)}`,
      credit: order.creditMinor > 0 ? `${order.currency} ${formatMinor(order.creditMinor, order.currency)}` : null,
      provider: order.provider,
      paidAt: order.paidAt ?? new Date(this.#now()),
      periodEnd: subscription?.currentPeriodEnd ?? null,
      timeZone: this.#timeZone,
      accountUrl: forOrganisation ? `${this.#config.server.webUrl}/enterprise/console?org=${order.accountId}` : `${this.#config.server.webUrl}/account/billing`,
    };
    const mail = order.state === 'refunded' ? refundMail[locale](values) : receiptMail[locale](values);
    await this.#deps.mailer.send({ to: account.email, ...mail });
  }

  async #setCancel(accountId: string, cancel: boolean, requestId: string | null, actorId: string): Promise<SubscriptionView> {
    const now = new Date(this.#now());
    const view = await this.#db.orm.em.fork().transactional(async (tx) => {
      await tx.findOneOrFail(Account, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const row = await tx.findOne(BillingSubscription, { accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const term = row && !row.endedAt ? this.#advance(row, now) : null;
      if (!row || !term) {
        throw new AppError('invalid_request', bilingual('There is no paid period to cancel or resume: this account is on Free.', '没有可取消或恢复的付费周期：该账户使用的是免费版。'));
      }
      if (term.cancelAtPeriodEnd !== cancel) {
        const before = termAudit(term);
        const next = cancel ? cancelAtPeriodEnd(term) : resumeTerm(term);
        this.#store(row, next, null);
        await tx.flush();
        await this.#audit(tx, cancel ? 'subscription:cancel' : 'subscription:resume', accountId, before, termAudit(next), null, 'account', actorId, requestId);
        return this.#viewOf(next, subscriptionState(next, now));
      }
      return this.#viewOf(term, subscriptionState(term, now));
    });
    return view;
  }

  /**
   * Puts the account on the term's package (Free without a term) inside `tx`, through the plan assignments'
   * one writer (audited; no actor but for staff refunds); the caller announces it after commit. The package
   * ends (`plan_package_until`) with the period unless a queued package follows. `onlyIf`: end only when the
   * account is still on that package (staff may have moved it since).
   */
  async #syncAccount(tx: Em, accountId: string, term: Term | null, reason: string, onlyIf?: string, actorId: string | null = null, requestId: string | null = null): Promise<void> {
    const packageId = term?.packageId ?? this.#freePackage;
    const until = term && !term.next ? term.periodEnd : null;
    await this.#deps.planAssignments.assignWithin(tx, accountId, { packageId, until, reason, actorId, requestId, onlyFrom: onlyIf });
  }

  async #audit(
    tx: Em,
    action: AuditAction,
    targetId: string,
    before: AuditFields | null,
    after: AuditFields | null,
    reason: string | null,
    targetType: 'account' | 'order' = 'account',
    actorId: string | null = null,
    requestId: string | null = null,
  ): Promise<void> {
    await this.#deps.audit.record({ actorId, action, targetType, targetId, before, after, reason, requestId }, tx);
  }
}

/** The first term of an account that never paid before. */
function createSubscription(tx: Em, order: OrderView, term: Term, at: Date): void {
  tx.create(BillingSubscription, {
    accountId: order.accountId,
    createdAt: at,
    updatedAt: at,
    version: 1,
    packageId: term.packageId,
    currency: term.currency,
    paidMinor: term.paidMinor,
    periodStart: term.periodStart,
    periodEnd: term.periodEnd,
    anchorDay: term.anchorDay,
    cancelAtPeriodEnd: false,
    nextPackageId: null,
    nextPaidMinor: null,
    nextCurrency: null,
    nextMonths: 1,
    endedAt: null,
    lastOrderId: order.id,
  });
}

export function toTerm(row: IBillingSubscription): Term {
  return {
    packageId: row.packageId,
    currency: row.currency,
    paidMinor: row.paidMinor,
    periodStart: row.periodStart,
    periodEnd: row.periodEnd,
    anchorDay: row.anchorDay,
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    next: row.nextPackageId ? { packageId: row.nextPackageId, paidMinor: row.nextPaidMinor ?? 0, currency: row.nextCurrency ?? row.currency } : null,
  };
}

function termAudit(term: Term): AuditFields {
  return {
    packageId: term.packageId,
    currency: term.currency,
    paidMinor: term.paidMinor,
    periodStart: term.periodStart.toISOString(),
    periodEnd: term.periodEnd.toISOString(),
    cancelAtPeriodEnd: term.cancelAtPeriodEnd,
    nextPackageId: term.next?.packageId ?? null,
  };
}

function orderAudit(order: OrderView): AuditFields {
  return {
    state: order.state,
    accountId: order.accountId,
    packageId: order.packageId,
    provider: order.provider,
    amountMinor: order.amountMinor,
    creditMinor: order.creditMinor,
    currency: order.currency,
    providerTradeNo: order.providerTradeNo,
  };
}
