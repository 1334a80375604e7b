/**
 * Issue 47 item 2: one upgrade quote. Checkout prices an upgrade with `upgradeQuote` asking for at least one
 * minor unit (no provider takes a 0.00 payment): the credit applied is `price − due`, and what the credit
 * and the charge exceed the price by lengthens the new period.
 */
import { describe, expect, it } from 'vitest';
import { extendTerm, startTerm, upgradeQuote } from '../../../server/modules/billing/subscription-math.ts';

const at = (iso: string) => new Date(iso);

describe("checkout's upgrade quote", () => {
  it('charges at least the minimum when the credit covers the price, and carries the rest as surplus', () => {
    let term = startTerm({ packageId: 'pro', paidMinor: 900, currency: 'USD', at: at('2027-01-01T00:00:00Z') }, 'UTC');
    term = extendTerm(extendTerm(term, 900, 'UTC'), 900, 'UTC'); // 2700 paid through Apr 1
    const quote = upgradeQuote(term, { priceMinor: 1900, currency: 'USD' }, at('2027-01-01T00:00:00Z'), { minimumDueMinor: 1 });
    expect(quote).toEqual({ creditMinor: 2700, amountDueMinor: 1, surplusMinor: 801 });
  });

  it('is the plain quote when the credit is smaller than the price', () => {
    const term = startTerm({ packageId: 'pro', paidMinor: 6500, currency: 'CNY', at: at('2027-04-01T00:00:00Z') }, 'Asia/Shanghai');
    const now = at('2027-04-16T00:00:00Z');
    expect(upgradeQuote(term, { priceMinor: 13_800, currency: 'CNY' }, now, { minimumDueMinor: 1 })).toEqual(upgradeQuote(term, { priceMinor: 13_800, currency: 'CNY' }, now));
    expect(upgradeQuote(term, { priceMinor: 13_800, currency: 'CNY' }, now, { minimumDueMinor: 1 })).toEqual({ creditMinor: 3250, amountDueMinor: 10_550, surplusMinor: 0 });
  });
});
