import { describe, expect, it } from 'vitest';
import {
  advance,
  applyUpgrade,
  cancelAtPeriodEnd,
  extendTerm,
  purchaseKind,
  scheduleDowngrade,
  startTerm,
  subscriptionState,
  unusedCreditMinor,
  upgradeQuote,
  worthEnd,
  type Term,
} from '../../../server/modules/billing/subscription-math.ts';

const at = (iso: string) => new Date(iso);

describe('terms over calendar months', () => {
  it('keeps the anchor day through clamped months: Jan 31 → Feb 28 → Mar 31 → Apr 30 → May 31', () => {
    let term = startTerm({ packageId: 'pro', paidMinor: 900, currency: 'USD', at: at('2027-01-31T12:00:00Z') }, 'UTC');
    const ends = [term.periodEnd.toISOString().slice(0, 10)];
    for (let month = 0; month < 4; month++) {
      term = extendTerm(term, 900, 'UTC');
      ends.push(term.periodEnd.toISOString().slice(0, 10));
    }
    expect(ends).toEqual(['2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31', '2027-06-30']);
    expect(term.paidMinor).toBe(4500);
  });
});

describe('unused credit (floor to the minor unit)', () => {
  const term = (paidMinor: number, start: string, end: string) => ({ paidMinor, periodStart: at(start), periodEnd: at(end) });

  it.each([
    // paid, period, now, credit
    [900, '2027-01-01T00:00:00Z', '2027-02-01T00:00:00Z', '2027-01-16T12:00:00Z', 450], // exactly half of 31 days
    [6500, '2027-04-01T00:00:00Z', '2027-05-01T00:00:00Z', '2027-04-21T00:00:00Z', 2166], // 6500 / 3 = 2166.67 → 2166
    [6500, '2027-04-01T00:00:00Z', '2027-05-01T00:00:00Z', '2027-04-01T00:00:00Z', 6500], // unused: all
    [6500, '2027-04-01T00:00:00Z', '2027-05-01T00:00:00Z', '2027-03-01T00:00:00Z', 6500], // before start: all
    [6500, '2027-04-01T00:00:00Z', '2027-05-01T00:00:00Z', '2027-05-01T00:00:00Z', 0], // at the end: nothing
    [6500, '2027-04-01T00:00:00Z', '2027-05-01T00:00:00Z', '2027-06-01T00:00:00Z', 0],
    [1, '2027-04-01T00:00:00Z', '2027-05-01T00:00:00Z', '2027-04-01T00:00:00.001Z', 0], // 0.99999… → 0
    [100, '2027-04-01T00:00:00Z', '2027-05-01T00:00:00Z', '2027-04-30T23:59:59.999Z', 0],
    // Large amounts do not lose precision (BigInt): 2,000,000,000 × 1/4
    [2_000_000_000, '2027-04-01T00:00:00Z', '2027-05-01T00:00:00Z', '2027-04-23T12:00:00Z', 500_000_000],
  ])('paid %i for %s → %s, at %s: %i', (paid, start, end, now, credit) => {
    expect(unusedCreditMinor(term(paid, start, end), at(now))).toBe(credit);
  });

  it('is never more than the value left and never short by a whole minor unit', () => {
    const period = term(13_800, '2027-02-01T00:00:00Z', '2027-03-01T00:00:00Z');
    const length = period.periodEnd.getTime() - period.periodStart.getTime();
    for (let step = 0; step <= 1000; step++) {
      const now = new Date(period.periodStart.getTime() + Math.floor((length * step) / 1000));
      const exact = (13_800 * (period.periodEnd.getTime() - now.getTime())) / length;
      const credit = unusedCreditMinor(period, now);
      expect(Number.isInteger(credit)).toBe(true);
      expect(credit).toBeLessThanOrEqual(exact);
      expect(exact - credit).toBeLessThan(1);
    }
  });
});

describe('upgrades, downgrades, cancellation, expiry', () => {
  const pro = (start = '2027-04-01T00:00:00Z'): Term => startTerm({ packageId: 'pro', paidMinor: 6500, currency: 'CNY', at: at(start) }, 'Asia/Shanghai');
  const rank = (id: string) => ({ free: 0, pro: 1, max_x5: 5, max_x20: 20 })[id] ?? 0;

  it('classifies a purchase', () => {
    const term = pro();
    expect(purchaseKind(null, 'pro', at('2027-04-02T00:00:00Z'), rank)).toBe('start');
    expect(purchaseKind(term, 'pro', at('2027-04-02T00:00:00Z'), rank)).toBe('extend');
    expect(purchaseKind(term, 'max_x5', at('2027-04-02T00:00:00Z'), rank)).toBe('upgrade');
    expect(purchaseKind({ ...term, packageId: 'max_x20' }, 'pro', at('2027-04-02T00:00:00Z'), rank)).toBe('downgrade');
    expect(purchaseKind(term, 'max_x5', term.periodEnd, rank)).toBe('start');
  });

  it('an upgrade halfway credits half the period against the new price and starts at once', () => {
    const term = pro('2027-04-01T00:00:00Z'); // 30 days in April
    const now = at('2027-04-16T00:00:00Z');
    const quote = upgradeQuote(term, { priceMinor: 13_800, currency: 'CNY' }, now);
    expect(quote).toEqual({ creditMinor: 3250, amountDueMinor: 10_550, surplusMinor: 0 });
    const upgraded = applyUpgrade(term, { packageId: 'max_x5', priceMinor: 13_800, quote, at: now }, 'Asia/Shanghai');
    expect(upgraded).toMatchObject({ packageId: 'max_x5', paidMinor: 13_800, periodStart: now, periodEnd: at('2027-05-16T00:00:00Z'), anchorDay: 16 });
  });

  it('an upgrade must be paid in the currency of the current period (no FX)', () => {
    expect(() => upgradeQuote(pro(), { priceMinor: 1900, currency: 'USD' }, at('2027-04-10T00:00:00Z'))).toThrow(RangeError);
  });

  it('a credit larger than the new price costs nothing and lengthens the new period pro rata', () => {
    let term = startTerm({ packageId: 'pro', paidMinor: 900, currency: 'USD', at: at('2027-01-01T00:00:00Z') }, 'UTC');
    term = extendTerm(extendTerm(term, 900, 'UTC'), 900, 'UTC'); // paid through Apr 1: 2700 for 90 days
    const now = at('2027-01-01T00:00:00Z');
    const quote = upgradeQuote(term, { priceMinor: 1900, currency: 'USD' }, now);
    expect(quote).toEqual({ creditMinor: 2700, amountDueMinor: 0, surplusMinor: 800 });
    const upgraded = applyUpgrade(term, { packageId: 'max_x5', priceMinor: 1900, quote, at: now }, 'UTC');
    const month = Date.parse('2027-02-01T00:00:00Z') - now.getTime();
    expect(upgraded.periodEnd.getTime()).toBe(Date.parse('2027-02-01T00:00:00Z') + Math.floor((800 * month) / 1900));
    expect(upgraded.paidMinor).toBe(2700);
  });

  it('a downgrade waits for the period end, then runs its own month from there', () => {
    const term = scheduleDowngrade({ ...pro('2027-01-31T04:00:00Z'), packageId: 'max_x20' }, { packageId: 'pro', paidMinor: 6500, currency: 'CNY' });
    // Jan 31 12:00 in Shanghai → Feb 28 12:00 → Mar 31 12:00
    expect(advance(term, at('2027-02-20T00:00:00Z'), 'Asia/Shanghai')).toBe(term);
    const next = advance(term, at('2027-02-28T04:00:00Z'), 'Asia/Shanghai')!;
    expect(next).toMatchObject({ packageId: 'pro', periodStart: at('2027-02-28T04:00:00Z'), periodEnd: at('2027-03-31T04:00:00Z'), next: null });
    expect(advance(term, at('2027-03-31T04:00:00Z'), 'Asia/Shanghai')).toBeNull();
    expect(() => scheduleDowngrade(term, { packageId: 'pro', paidMinor: 6500, currency: 'CNY' })).toThrow(RangeError);
  });

  it('cancellation keeps the paid period and then expires to Free', () => {
    const term = cancelAtPeriodEnd(pro());
    expect(subscriptionState(term, at('2027-04-20T00:00:00Z'))).toBe('cancelled');
    expect(advance(term, at('2027-04-20T00:00:00Z'), 'Asia/Shanghai')).toBe(term);
    expect(subscriptionState(term, term.periodEnd)).toBe('expired');
    expect(advance(term, term.periodEnd, 'Asia/Shanghai')).toBeNull();
  });

  it('an unpaid term expires at its end', () => {
    const term = pro();
    expect(subscriptionState(term, at('2027-04-30T15:59:59Z'))).toBe('active');
    expect(subscriptionState(term, term.periodEnd)).toBe('expired');
    expect(subscriptionState(null, term.periodEnd)).toBe('expired');
  });
});

describe('what a payment is worth in time (worthEnd)', () => {
  it.each([
    // zone, from, value, price, end — one calendar month when value = price, pro rata (floor to the ms) otherwise
    ['UTC', '2027-01-31T10:00:00Z', 6500, 6500, '2027-02-28T10:00:00.000Z'],
    ['UTC', '2027-04-01T00:00:00Z', 3250, 6500, '2027-04-16T00:00:00.000Z'], // half of 30 days
    ['UTC', '2027-04-01T00:00:00Z', 1, 3, '2027-04-11T00:00:00.000Z'], // a third of 30 days
    ['UTC', '2027-02-01T00:00:00Z', 1, 7, '2027-02-05T00:00:00.000Z'], // a seventh of 28 days
    ['UTC', '2027-04-01T00:00:00Z', 13_000, 6500, '2027-05-31T00:00:00.000Z'], // twice a 30-day month (60 days)
    ['Asia/Shanghai', '2027-01-30T16:00:00Z', 6500, 6500, '2027-02-27T16:00:00.000Z'], // Jan 31 00:00 +08 → Feb 28
    // New York: Mar 1 00:00 EST → Apr 1 00:00 EDT is 743 h; a third of it, floored to the millisecond
    ['America/New_York', '2027-03-01T05:00:00Z', 1, 3, new Date(Date.parse('2027-03-01T05:00:00Z') + Math.floor((743 * 3600_000) / 3)).toISOString()],
  ])('%s: from %s, %i of %i → %s', (zone, from, value, price, end) => {
    expect(worthEnd(at(from), value, price, zone).toISOString()).toBe(end);
  });
});
