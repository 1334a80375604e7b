/**
 * `minorDigits` (and so `formatMinor`, `money`) asks Intl once per currency, not once per amount: building
 * an `Intl.NumberFormat` cost the dashboard's 90 days of revenue ~28 ms of svc CPU a request (issue 50
 * item 1). The constructions are counted through a wrapper around the real Intl.NumberFormat.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { formatMinor, minorDigits } from '../../../server/config/money.ts';

const RealNumberFormat = Intl.NumberFormat;
afterEach(() => {
  Intl.NumberFormat = RealNumberFormat;
});

describe('minorDigits', () => {
  it('builds one NumberFormat per currency however many amounts it formats', () => {
    let built = 0;
    Intl.NumberFormat = new Proxy(RealNumberFormat, {
      construct(target, args: ConstructorParameters<typeof Intl.NumberFormat>) {
        built += 1;
        return new target(...args);
      },
    });
    for (let i = 0; i < 500; i++) {
      expect(formatMinor(123_456, 'BHD')).toBe('123.456');
      expect(formatMinor(6500, 'JPY')).toBe('6500');
    }
    expect(built).toBeLessThanOrEqual(2);
  });

  it('still knows each currency’s digits, and refuses a code Intl does not know', () => {
    expect([minorDigits('USD'), minorDigits('CNY'), minorDigits('JPY'), minorDigits('BHD')]).toEqual([2, 2, 0, 3]);
    expect(() => minorDigits('NOPE')).toThrow(RangeError);
    expect(() => minorDigits('NOPE')).toThrow(RangeError);
  });
});
