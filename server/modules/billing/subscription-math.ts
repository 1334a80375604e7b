/**
 * Subscription money math: pure functions over instants and integer minor units (no I/O, no floats).
 *
 * Periods are calendar months in the configured time zone (DESIGN §4 `timezone`), as infra/calendar.ts
 * adds them (`addMonths`):
 *   - a period ends on the same local time of day as it started, `n` months later;
 *   - the day of month is the term's `anchorDay`, clamped to short months, and the anchor is kept, so
 *     a term started on Jan 31 ends Feb 28 (Feb 29 in leap years), then Mar 31, Apr 30, May 31 …;
 *   - local times that do not exist (a daylight-saving gap) move forward by the gap; local times that
 *     happen twice (the hour repeated in autumn) take the first one — as Temporal's `compatible` does.
 *
 * Money: an upgrade credits the unused part of the current period pro rata,
 *   credit = floor(paid × (periodEnd − now) / (periodEnd − periodStart))
 * in exact integer arithmetic (BigInt), rounded DOWN to the minor unit: the credit never exceeds the
 * value left, and the member loses less than one minor unit. It is charged against the new price
 * (`due = price − credit`, at least one minor unit: no provider takes a 0.00 payment); credit beyond the
 * price (after paying several months ahead) lengthens the new first period pro rata (floor to the millisecond).
 * Downgrades wait for the period end; cancellation ends the term at period end; nothing renews by itself
 * (every month is a one-off payment), so an ended term without a queued package expires to Free.
 */
import { addMonths, toLocal } from '../../infra/calendar.ts';

export interface Term {
  packageId: string;
  currency: string;
  /** What was paid for [periodStart, periodEnd), in minor units (one month's price, more after extensions). */
  paidMinor: number;
  periodStart: Date;
  periodEnd: Date;
  /** Day of month (1–31) the period ends on, clamped in shorter months. */
  anchorDay: number;
  cancelAtPeriodEnd: boolean;
  /** A cheaper package, already paid, that starts at `periodEnd` (a downgrade waits for the period end). */
  next: { packageId: string; paidMinor: number; currency: string } | null;
}

export type SubscriptionState = 'active' | 'cancelled' | 'expired';

/** A new one-month term bought at `at`. */
export function startTerm(purchase: { packageId: string; paidMinor: number; currency: string; at: Date }, timeZone: string): Term {
  const anchorDay = toLocal(purchase.at, timeZone).day;
  return {
    packageId: purchase.packageId,
    currency: purchase.currency,
    paidMinor: purchase.paidMinor,
    periodStart: purchase.at,
    periodEnd: addMonths(purchase.at, 1, timeZone, anchorDay),
    anchorDay,
    cancelAtPeriodEnd: false,
    next: null,
  };
}

/** The same package bought again while active: one more month after the current end. */
export function extendTerm(term: Term, paidMinor: number, timeZone: string): Term {
  return {
    ...term,
    paidMinor: term.paidMinor + paidMinor,
    periodEnd: addMonths(term.periodEnd, 1, timeZone, term.anchorDay),
    cancelAtPeriodEnd: false,
  };
}

/** The unused value of the current period at `now`, rounded down to the minor unit. */
export function unusedCreditMinor(term: Pick<Term, 'paidMinor' | 'periodStart' | 'periodEnd'>, now: Date): number {
  const start = BigInt(term.periodStart.getTime());
  const end = BigInt(term.periodEnd.getTime());
  const at = BigInt(Math.min(Math.max(now.getTime(), term.periodStart.getTime()), term.periodEnd.getTime()));
  if (end <= start) return 0;
  return Number((BigInt(term.paidMinor) * (end - at)) / (end - start));
}

export interface UpgradeQuote {
  creditMinor: number;
  /** What the upgrade order charges: `max(price − credit, minimumDueMinor)`. */
  amountDueMinor: number;
  /** Credit beyond the new price; it lengthens the new first period. */
  surplusMinor: number;
}

/**
 * The price of upgrading at `now` to a package costing `priceMinor` a month, in the term's currency (the
 * checkout's quote). The order charges at least `minimumDueMinor` (checkout asks for 1: no provider takes a
 * 0.00 payment); what the credit and the charge together exceed the price by lengthens the new period.
 */
export function upgradeQuote(term: Term, target: { priceMinor: number; currency: string }, now: Date, options: { minimumDueMinor?: number } = {}): UpgradeQuote {
  if (target.currency !== term.currency) {
    throw new RangeError(`the current period was paid in ${term.currency}; an upgrade is paid in the same currency, not ${target.currency}`);
  }
  const creditMinor = unusedCreditMinor(term, now);
  const amountDueMinor = Math.max(target.priceMinor - creditMinor, options.minimumDueMinor ?? 0);
  return { creditMinor, amountDueMinor, surplusMinor: Math.max(creditMinor + amountDueMinor - target.priceMinor, 0) };
}

/** An upgrade paid at `at`: the new package starts at once, for one month (plus any surplus, pro rata). */
export function applyUpgrade(
  term: Term,
  upgrade: { packageId: string; priceMinor: number; quote: UpgradeQuote; at: Date },
  timeZone: string,
): Term {
  const monthEnd = addMonths(upgrade.at, 1, timeZone);
  const monthMs = BigInt(monthEnd.getTime() - upgrade.at.getTime());
  const extraMs = upgrade.quote.surplusMinor > 0 ? Number((BigInt(upgrade.quote.surplusMinor) * monthMs) / BigInt(upgrade.priceMinor)) : 0;
  const periodEnd = new Date(monthEnd.getTime() + extraMs);
  return {
    packageId: upgrade.packageId,
    currency: term.currency,
    paidMinor: upgrade.quote.amountDueMinor + upgrade.quote.creditMinor,
    periodStart: upgrade.at,
    periodEnd,
    anchorDay: toLocal(periodEnd, timeZone).day,
    cancelAtPeriodEnd: false,
    next: term.next,
  };
}

/** A cheaper package paid now: it starts when the current period ends. */
export function scheduleDowngrade(term: Term, next: { packageId: string; paidMinor: number; currency: string }): Term {
  if (term.next) throw new RangeError(`a change to ${term.next.packageId} is already waiting for the period end`);
  return { ...term, next, cancelAtPeriodEnd: false };
}

/** Cancellation: the term ends at period end (a downgrade already paid for still starts). */
export function cancelAtPeriodEnd(term: Term): Term {
  return { ...term, cancelAtPeriodEnd: true };
}

export function resume(term: Term): Term {
  return { ...term, cancelAtPeriodEnd: false };
}

/** The term at `now`: unchanged before its end; then the queued package's month; otherwise null (Free). */
export function advance(term: Term, now: Date, timeZone: string): Term | null {
  let current: Term = term;
  while (now.getTime() >= current.periodEnd.getTime()) {
    if (!current.next) return null;
    current = {
      packageId: current.next.packageId,
      currency: current.next.currency,
      paidMinor: current.next.paidMinor,
      periodStart: current.periodEnd,
      periodEnd: addMonths(current.periodEnd, 1, timeZone, current.anchorDay),
      anchorDay: current.anchorDay,
      cancelAtPeriodEnd: current.cancelAtPeriodEnd,
      next: null,
    };
  }
  return current;
}

export function subscriptionState(term: Term | null, now: Date): SubscriptionState {
  if (!term || now.getTime() >= term.periodEnd.getTime()) return 'expired';
  return term.cancelAtPeriodEnd ? 'cancelled' : 'active';
}

export type PurchaseKind = 'start' | 'extend' | 'upgrade' | 'downgrade';

/**
 * What buying `packageId` does to `term` at `now`. `rank` orders packages (e.g. by pool multiplier):
 * higher is an upgrade (at once, with credit), lower a downgrade (at period end).
 */
export function purchaseKind(term: Term | null, packageId: string, now: Date, rank: (packageId: string) => number): PurchaseKind {
  if (!term || now.getTime() >= term.periodEnd.getTime()) return 'start';
  if (packageId === term.packageId) return 'extend';
  return rank(packageId) > rank(term.packageId) ? 'upgrade' : 'downgrade';
}

/**
 * The end of what `valueMinor` buys from `from` at `priceMinor` a month: one calendar month (on
 * `anchorDay`) when the value equals the price, that month scaled pro rata otherwise (floor to the
 * millisecond). Used when an order is paid for less than the list price but its credit can no longer be
 * applied (the term it was computed from changed before the payment arrived).
 */
export function worthEnd(from: Date, valueMinor: number, priceMinor: number, timeZone: string, anchorDay?: number): Date {
  const monthEnd = addMonths(from, 1, timeZone, anchorDay);
  if (valueMinor === priceMinor) return monthEnd;
  const monthMs = BigInt(monthEnd.getTime() - from.getTime());
  return new Date(from.getTime() + Number((monthMs * BigInt(valueMinor)) / BigInt(priceMinor)));
}
