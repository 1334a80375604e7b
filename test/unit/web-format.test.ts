/**
 * The web app's one place for numbers, money, dates and durations (`web/src/lib/format.ts`): Intl in the
 * reader's language, exact with the server's decimal strings, the ISO code for every currency but the
 * reader's own.
 */
import { describe, expect, it } from 'vitest';
import {
  formatCompact,
  formatCompactMoney,
  formatDay,
  formatDiscount,
  formatDuration,
  formatMicros,
  formatMilliseconds,
  formatSeconds,
  formatMoney,
  formatPercent,
  formatShare,
  formatTokenCount,
  formatZonedDateTime,
} from '../../web/src/lib/format.ts';

const nbsp = '\u00a0';

describe('formatMoney', () => {
  it('writes the ISO code first, except for the reader’s home currency', () => {
    expect(formatMoney({ amount: '9.00', currency: 'USD' }, 'en')).toBe(`USD${nbsp}9.00`);
    expect(formatMoney({ amount: '9.00', currency: 'USD' }, 'zh-CN')).toBe(`USD${nbsp}9.00`);
    expect(formatMoney({ amount: '65.00', currency: 'CNY' }, 'zh-CN')).toBe('¥65.00');
    expect(formatMoney({ amount: '65.00', currency: 'CNY' }, 'en')).toBe(`CNY${nbsp}65.00`);
  });

  it('keeps every digit the server sent, and groups thousands', () => {
    expect(formatMoney({ amount: '0.000001', currency: 'USD' }, 'en')).toBe(`USD${nbsp}0.000001`);
    expect(formatMoney({ amount: '0.10875', currency: 'USD' }, 'zh-CN')).toBe(`USD${nbsp}0.10875`);
    expect(formatMoney({ amount: '12345678.123456', currency: 'USD' }, 'en')).toBe(`USD${nbsp}12,345,678.123456`);
  });

  it('still shows an amount in a currency Intl does not know', () => {
    expect(formatMoney({ amount: '1.50', currency: 'XQQ' }, 'en')).toMatch(/^XQQ\s1\.50$/);
  });
});

describe('durations, shares, percentages, counts', () => {
  it('says how long until a reset in each language', () => {
    const hour = 3_600_000;
    expect(formatDuration(4 * hour, 'en')).toBe('4h');
    expect(formatDuration(4 * hour, 'zh-CN')).toBe('4小时');
    expect(formatDuration(4 * hour + 12 * 60_000, 'zh-CN')).toBe('4小时12分钟');
    expect(formatDuration(52 * hour, 'en')).toBe('2d 4h');
    expect(formatDuration(30_000, 'zh-CN')).toBe('1分钟');
  });

  it('formats shares, promotions, token counts and latencies through Intl', () => {
    expect(formatShare(0, 1000, 'en')).toBe('0%');
    expect(formatShare(1, 1_000_000, 'zh-CN')).toBe('<0.1%');
    expect(formatShare(125, 1000, 'en')).toBe('13%');
    expect(formatShare(2000, 1000, 'en')).toBe('100%');
    expect(formatDiscount(0.7, 'en')).toBe('-70%');
    expect(formatPercent(0.75, 'zh-CN')).toBe('75%');
    expect(formatTokenCount(1_000_000, 'en')).toBe('1M');
    expect(formatTokenCount(1_000_000, 'zh-CN')).toBe('100万');
    expect(formatMilliseconds(1234, 'zh-CN')).toBe('1,234毫秒');
    // A request's duration: seconds to the hundredth, never "0.00" for one that took any time.
    expect(formatSeconds(1.2345, 'zh-CN')).toBe('1.23秒');
    expect(formatSeconds(0.845, 'en')).toBe('0.85 sec');
    expect(formatSeconds(0.003, 'en')).toBe('0.01 sec');
  });

  it('names the zone of a reset instant', () => {
    expect(formatZonedDateTime('2026-11-23T00:00:00.000Z', 'UTC', 'zh-CN')).toBe('11月23日周一 UTC 00:00');
    expect(formatZonedDateTime('2026-11-23T00:00:00.000Z', 'Asia/Shanghai', 'zh-CN')).toMatch(/^11月23日周一 (GMT\+8|CST) 08:00$/);
    expect(formatZonedDateTime('2026-11-23T00:00:00.000Z', 'Not/AZone', 'en')).toContain('UTC');
  });
});

describe('the admin dashboard’s figures', () => {
  it('shortens counts the way each language counts (thousands / 万), keeping small fractions readable', () => {
    expect(formatCompact(1234, 'en')).toBe('1.2K');
    expect(formatCompact(56_789, 'en')).toBe('56.8K');
    expect(formatCompact(56_789, 'zh-CN')).toBe('5.7万');
    expect(formatCompact(5_600_000, 'zh-CN')).toBe('560万');
    expect(formatCompact(0.0153, 'en')).toBe('0.015');
    expect(formatCompact(0, 'zh-CN')).toBe('0');
  });

  it('shortens money with its currency, the reader’s own by its symbol', () => {
    expect(formatCompactMoney({ amount: '1234.50', currency: 'USD' }, 'en')).toBe(`USD${nbsp}1.2K`);
    expect(formatCompactMoney({ amount: '0.077', currency: 'USD' }, 'en')).toBe(`USD${nbsp}0.077`);
    expect(formatCompactMoney({ amount: '56789', currency: 'CNY' }, 'zh-CN')).toBe('¥5.7万');
    expect(formatCompactMoney({ amount: '56789', currency: 'USD' }, 'zh-CN')).toBe(`USD${nbsp}5.7万`);
  });

  it('writes integer micro-units as exact money', () => {
    expect(formatMicros(42_000, 'USD', 'en')).toBe(`USD${nbsp}0.042`);
    expect(formatMicros(1_000_000, 'USD', 'zh-CN')).toBe(`USD${nbsp}1.00`);
    expect(formatMicros(123_456_789, 'USD', 'en')).toBe(`USD${nbsp}123.456789`);
    expect(formatMicros(1, 'CNY', 'zh-CN')).toBe('¥0.000001');
  });

  it('names a calendar day as given, whatever the reader’s zone', () => {
    expect(formatDay('2026-11-03', 'en')).toBe('Nov 3');
    expect(formatDay('2026-11-03', 'zh-CN')).toBe('11月3日');
    expect(formatDay('2026-11-03', 'zh-CN', { weekday: true })).toBe('11月3日周二');
    expect(formatDay('2026-11-03', 'zh-CN', { year: true })).toBe('2026年11月3日');
    expect(formatDay('2026-11-03', 'en', { weekday: true })).toBe('Tue, Nov 3');
  });
});
