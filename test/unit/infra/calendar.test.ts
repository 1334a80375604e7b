/**
 * The one calendar (server/infra/calendar.ts) that both the usage pools' windows and subscription periods
 * cut time with: local dates in a time zone, calendar months on an anchor day, and day / ISO week / month
 * periods — exact across daylight saving, month ends and leap years.
 */
import { describe, expect, it } from 'vitest';
import { addMonths, fromLocal, periodsAt, toLocal } from '../../../server/infra/calendar.ts';

const at = (iso: string) => new Date(iso);
const hours = (from: Date, to: Date) => (to.getTime() - from.getTime()) / 3_600_000;

describe('calendar months in the configured time zone', () => {
  it.each([
    // zone, start, months, expected end — month ends clamp and the anchor day comes back
    ['UTC', '2027-01-31T10:00:00Z', 1, '2027-02-28T10:00:00.000Z'],
    ['UTC', '2027-01-31T10:00:00Z', 2, '2027-03-31T10:00:00.000Z'],
    ['UTC', '2027-01-31T10:00:00Z', 3, '2027-04-30T10:00:00.000Z'],
    ['UTC', '2028-01-31T10:00:00Z', 1, '2028-02-29T10:00:00.000Z'], // leap year
    ['UTC', '2028-02-29T00:00:00Z', 12, '2029-02-28T00:00:00.000Z'],
    ['UTC', '2028-02-29T00:00:00Z', 48, '2032-02-29T00:00:00.000Z'],
    ['UTC', '2027-01-30T08:00:00Z', 1, '2027-02-28T08:00:00.000Z'],
    ['UTC', '2026-12-31T23:59:59.999Z', 1, '2027-01-31T23:59:59.999Z'], // year end
    ['UTC', '2026-12-31T23:59:59.999Z', 2, '2027-02-28T23:59:59.999Z'],
    ['UTC', '2027-03-31T00:00:00Z', 1, '2027-04-30T00:00:00.000Z'],
    // Shanghai (UTC+8): 00:30 on Jan 31 local is still Jan 30 in UTC — the local calendar decides.
    ['Asia/Shanghai', '2027-01-30T16:30:00Z', 1, '2027-02-27T16:30:00.000Z'],
    ['Asia/Shanghai', '2027-01-30T16:30:00Z', 2, '2027-03-30T16:30:00.000Z'],
    ['Asia/Shanghai', '2028-01-30T16:30:00Z', 1, '2028-02-28T16:30:00.000Z'], // Feb 29 00:30 +08
    // New York: the local time of day is kept across daylight saving (EST −5 / EDT −4 in 2027: Mar 14, Nov 7).
    ['America/New_York', '2027-03-01T15:00:00Z', 1, '2027-04-01T14:00:00.000Z'],
    ['America/New_York', '2027-10-15T14:00:00Z', 1, '2027-11-15T15:00:00.000Z'],
    // 02:30 on Mar 14 does not exist: forward by the gap, to 03:30 EDT.
    ['America/New_York', '2027-02-14T07:30:00Z', 1, '2027-03-14T07:30:00.000Z'],
    // 01:30 on Nov 7 happens twice: the first one (EDT).
    ['America/New_York', '2027-10-07T05:30:00Z', 1, '2027-11-07T05:30:00.000Z'],
    ['America/New_York', '2027-01-31T05:00:00Z', 1, '2027-02-28T05:00:00.000Z'], // midnight EST
    ['America/New_York', '2027-01-31T05:00:00Z', 2, '2027-03-31T04:00:00.000Z'], // midnight EDT
    // Havana's midnight of Mar 14 does not exist: forward by the gap, to 01:00 CDT.
    ['America/Havana', '2027-02-14T05:00:00Z', 1, '2027-03-14T05:00:00.000Z'],
  ])('%s: %s + %i month(s) = %s', (zone, start, months, end) => {
    expect(addMonths(at(start), months, zone).toISOString()).toBe(end);
  });

  it.each(['UTC', 'Asia/Shanghai', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe'])('local ↔ instant round-trips every hour of a year in %s', (zone) => {
    for (let instant = Date.parse('2027-01-01T00:00:00Z'); instant < Date.parse('2028-01-01T00:00:00Z'); instant += 60 * 60_000) {
      const local = toLocal(new Date(instant), zone);
      const back = fromLocal(local, zone).getTime();
      // The repeated hour maps back to its first occurrence; every other time maps back exactly.
      expect(back === instant || (back < instant && toLocal(new Date(back), zone).hour === local.hour)).toBe(true);
    }
  });
});

describe('day, ISO week and month periods in the configured time zone', () => {
  it('a day is 23 hours when clocks spring forward and 25 when they fall back; the week and month stretch with it', () => {
    // New York, 2027: EST → EDT on Sunday Mar 14, back on Sunday Nov 7.
    const spring = periodsAt(Date.parse('2027-03-14T12:00:00Z'), 'America/New_York');
    expect([spring.day.start.toISOString(), spring.day.end.toISOString()]).toEqual(['2027-03-14T05:00:00.000Z', '2027-03-15T04:00:00.000Z']);
    expect(hours(spring.day.start, spring.day.end)).toBe(23);
    expect(spring.week.first).toEqual({ year: 2027, month: 3, day: 8 });
    expect(hours(spring.week.start, spring.week.end)).toBe(7 * 24 - 1);
    expect(hours(spring.month.start, spring.month.end)).toBe(31 * 24 - 1);
    const autumn = periodsAt(Date.parse('2027-11-07T12:00:00Z'), 'America/New_York');
    expect([autumn.day.start.toISOString(), autumn.day.end.toISOString()]).toEqual(['2027-11-07T04:00:00.000Z', '2027-11-08T05:00:00.000Z']);
    expect(hours(autumn.day.start, autumn.day.end)).toBe(25);
  });

  it('a half-hour shift (Lord Howe Island) makes a 23½-hour day', () => {
    const day = periodsAt(Date.parse('2027-10-03T12:00:00Z'), 'Australia/Lord_Howe').day;
    expect([day.start.toISOString(), day.end.toISOString()]).toEqual(['2027-10-02T13:30:00.000Z', '2027-10-03T13:00:00.000Z']);
  });

  it('a day whose midnight does not exist starts at its first instant, where the day before ends', () => {
    // Havana moves 00:00 → 01:00 on Sunday 2027-03-14: that day begins at 01:00 CDT (05:00Z).
    const day = periodsAt(Date.parse('2027-03-14T12:00:00Z'), 'America/Havana').day;
    expect(day.start.toISOString()).toBe('2027-03-14T05:00:00.000Z');
    expect(toLocal(day.start, 'America/Havana')).toMatchObject({ year: 2027, month: 3, day: 14, hour: 1, minute: 0 });
    expect(periodsAt(Date.parse('2027-03-13T12:00:00Z'), 'America/Havana').day.end.toISOString()).toBe('2027-03-14T05:00:00.000Z');
  });

  it('month ends, leap days and year ends', () => {
    const leap = periodsAt(Date.parse('2028-02-29T12:00:00Z'), 'Asia/Shanghai'); // 20:00 on Feb 29 there
    expect(leap.day.first).toEqual({ year: 2028, month: 2, day: 29 });
    expect([leap.month.start.toISOString(), leap.month.end.toISOString()]).toEqual(['2028-01-31T16:00:00.000Z', '2028-02-29T16:00:00.000Z']);
    const newYearsEve = periodsAt(Date.parse('2027-12-31T23:59:59.999Z'), 'UTC');
    expect(newYearsEve.day.end.toISOString()).toBe('2028-01-01T00:00:00.000Z');
    expect(newYearsEve.month.end.toISOString()).toBe('2028-01-01T00:00:00.000Z');
    // ISO weeks run Monday to Monday across the year end.
    expect(newYearsEve.week.first).toEqual({ year: 2027, month: 12, day: 27 });
    expect(newYearsEve.week.end.toISOString()).toBe('2028-01-03T00:00:00.000Z');
  });

  it.each(['UTC', 'Asia/Shanghai', 'America/New_York', 'Australia/Lord_Howe', 'America/Havana', 'America/Santiago', 'Asia/Kathmandu'])(
    'in %s every day of two years starts at the first instant of its local date and ends where the next one starts',
    (zone) => {
      let previous = periodsAt(Date.parse('2026-01-01T12:00:00Z'), zone).day;
      for (let noon = Date.parse('2026-01-02T12:00:00Z'); noon < Date.parse('2028-01-01T00:00:00Z'); noon += 86_400_000) {
        const { day } = periodsAt(noon, zone);
        if (day.first.day === previous.first.day) continue;
        expect(day.start.getTime(), `${zone} ${JSON.stringify(day.first)}`).toBe(previous.end.getTime());
        expect(toLocal(day.start, zone)).toMatchObject(day.first);
        expect(toLocal(day.start.getTime() - 1, zone)).not.toMatchObject(day.first);
        previous = day;
      }
    },
  );
});
