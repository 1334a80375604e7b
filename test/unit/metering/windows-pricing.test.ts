import { describe, expect, it } from 'vitest';
import { PoolWindows } from '../../../server/metering/windows.ts';
import { costMicros } from '../../../server/metering/pricing.ts';
import { discounted } from '../../../server/config/money.ts';

describe('PoolWindows', () => {
  it('UTC: day, ISO week from Monday, calendar month', () => {
    const w = new PoolWindows('UTC').at(Date.parse('2026-11-21T22:15:00Z')); // a Saturday
    expect(w.day).toMatchObject({ key: 'd2026-11-21' });
    expect(w.day.resetsAt.toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(w.week.key).toBe('w2026-11-16');
    expect(w.week.startsAt.toISOString()).toBe('2026-11-16T00:00:00.000Z');
    expect(w.week.resetsAt.toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(w.month.key).toBe('m2026-11');
    expect(w.month.resetsAt.toISOString()).toBe('2026-12-01T00:00:00.000Z');
    const december = new PoolWindows('UTC').at(Date.parse('2026-12-31T23:59:59Z'));
    expect(december.month.resetsAt.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('follows the configured time zone, across a DST change', () => {
    const shanghai = new PoolWindows('Asia/Shanghai').at(Date.parse('2026-11-21T17:00:00Z')); // 01:00 on the 22nd there
    expect(shanghai.day.key).toBe('d2026-11-22');
    expect(shanghai.day.startsAt.toISOString()).toBe('2026-11-21T16:00:00.000Z');
    expect(shanghai.week.key).toBe('w2026-11-16');
    // New York leaves DST on 2026-11-01: that day is 25 hours long.
    const ny = new PoolWindows('America/New_York').at(Date.parse('2026-11-01T12:00:00Z'));
    expect(ny.day.startsAt.toISOString()).toBe('2026-11-01T04:00:00.000Z');
    expect(ny.day.resetsAt.toISOString()).toBe('2026-11-02T05:00:00.000Z');
  });

  it('a day whose midnight falls in a daylight-saving gap starts when the day before ends, not an hour early', () => {
    // Havana jumps 00:00 → 01:00 on 2027-03-14: the pools of the 13th last until 01:00 CDT (05:00Z).
    const havana = new PoolWindows('America/Havana');
    const saturday = havana.at(Date.parse('2027-03-13T12:00:00Z'));
    const sunday = havana.at(Date.parse('2027-03-14T12:00:00Z'));
    expect(sunday.day.key).toBe('d2027-03-14');
    expect(saturday.day.resetsAt.toISOString()).toBe('2027-03-14T05:00:00.000Z');
    expect(sunday.day.startsAt.toISOString()).toBe('2027-03-14T05:00:00.000Z');
    expect(havana.at(Date.parse('2027-03-14T04:30:00Z')).day.key).toBe('d2027-03-13');
  });

  it('caches until the day resets', () => {
    const windows = new PoolWindows('UTC');
    const a = windows.current(Date.parse('2026-11-21T10:00:00Z'));
    expect(windows.current(Date.parse('2026-11-21T23:59:59Z'))).toBe(a);
    expect(windows.current(Date.parse('2026-11-22T00:00:00Z')).day.key).toBe('d2026-11-22');
  });
});

describe('pricing', () => {
  it('effective price = list × (1 − promotion), in integer micros; cost rounds up', () => {
    expect(discounted(140_000, 7000)).toBe(42_000); // 0.14 − 70 %
    expect(discounted(435_000, 7500)).toBe(108_750); // 0.435 − 75 %
    const rates = { class: 'premium' as const, inputPerMillion: 108_750, outputPerMillion: 217_500 };
    expect(costMicros(rates, 0, 0)).toBe(0);
    expect(costMicros(rates, 1_000_000, 0)).toBe(108_750);
    expect(costMicros(rates, 3, 8)).toBe(3); // 0.326 + 1.74 = 2.066 → 3
    expect(Number.isInteger(costMicros(rates, 123_457, 98_765))).toBe(true);
  });
});
