/**
 * The calendar of a time zone (DESIGN §4 `timezone`): the one place that turns instants into local dates
 * and back. The usage pools' windows (metering/windows.ts: day, ISO week from Monday, month) and the
 * subscription periods (billing/subscription-math.ts: calendar months on an anchor day) both cut time here.
 *
 * Local times that do not exist (a daylight-saving gap) move forward by the gap, and local times that happen
 * twice (the hour repeated in autumn) take the first one — Temporal's `compatible` disambiguation. So a day
 * whose midnight falls in a gap starts at the first instant that exists (01:00 where clocks jump 00:00 → 01:00).
 */

export interface LocalDate {
  year: number;
  /** 1–12 */
  month: number;
  day: number;
}

export interface LocalDateTime extends LocalDate {
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/** A calendar period (a local day, ISO week or month): its first local date and the instants it spans. */
export interface Period {
  first: LocalDate;
  start: Date;
  /** Exclusive: the start of the next period. */
  end: Date;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, format);
  }
  return format;
}

/** The wall-clock reading of `instant` in `timeZone`. */
export function toLocal(instant: Date | number, timeZone: string): LocalDateTime {
  const out: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(instant)) if (part.type !== 'literal') out[part.type] = Number(part.value);
  const ms = typeof instant === 'number' ? instant : instant.getTime();
  const millisecond = ((ms % 1000) + 1000) % 1000;
  return { year: out.year!, month: out.month!, day: out.day!, hour: out.hour!, minute: out.minute!, second: out.second!, millisecond };
}

/** The instant showing `local` on the wall in `timeZone` (gaps move forward, repeated times take the first). */
export function fromLocal(local: LocalDateTime, timeZone: string): Date {
  const wall = asUtc(local);
  const day = 86_400_000;
  const offsetBefore = offsetAt(wall - day, timeZone);
  const offsetAfter = offsetAt(wall + day, timeZone);
  const before = wall - offsetBefore;
  // No offset change within a day either side: the wall time exists exactly once.
  if (offsetBefore === offsetAfter) return new Date(before);
  const after = wall - offsetAfter;
  const candidates = [before, after].filter((instant) => asUtc(toLocal(instant, timeZone)) === wall);
  if (candidates.length > 0) return new Date(Math.min(...candidates));
  // Inside a gap: read the wall time with the offset from before the transition, which lands after it.
  return new Date(before);
}

/** The first instant of local date `date` in `timeZone`. */
export function startOfDay(date: LocalDate, timeZone: string): Date {
  return fromLocal({ ...date, hour: 0, minute: 0, second: 0, millisecond: 0 }, timeZone);
}

/** The local day, ISO week (Monday to Sunday) and month containing `instant`. */
export function periodsAt(instant: number, timeZone: string): { day: Period; week: Period; month: Period } {
  const today = dateOf(toLocal(instant, timeZone));
  const monday = addDays(today, -isoWeekday(today));
  const monthStart = { year: today.year, month: today.month, day: 1 };
  const nextMonth = today.month === 12 ? { year: today.year + 1, month: 1, day: 1 } : { year: today.year, month: today.month + 1, day: 1 };
  const period = (first: LocalDate, next: LocalDate): Period => ({ first, start: startOfDay(first, timeZone), end: startOfDay(next, timeZone) });
  return { day: period(today, addDays(today, 1)), week: period(monday, addDays(monday, 7)), month: period(monthStart, nextMonth) };
}

/**
 * `months` calendar months after `from` in `timeZone`, on day `anchorDay` (default: `from`'s day) clamped to
 * the target month's length, at `from`'s local time of day: Jan 31 + 1 month = Feb 28 (29 in leap years).
 */
export function addMonths(from: Date, months: number, timeZone: string, anchorDay?: number): Date {
  const local = toLocal(from, timeZone);
  const index = local.month - 1 + months;
  const year = local.year + Math.floor(index / 12);
  const month = (((index % 12) + 12) % 12) + 1;
  const day = Math.min(anchorDay ?? local.day, daysInMonth(year, month));
  return fromLocal({ ...local, year, month, day }, timeZone);
}

export function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** `2026-11-21`. */
export function isoDate(date: LocalDate): string {
  return `${date.year}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')}`;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Monday = 0 … Sunday = 6. */
function isoWeekday(date: LocalDate): number {
  return (new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay() + 6) % 7;
}

function dateOf(local: LocalDateTime): LocalDate {
  return { year: local.year, month: local.month, day: local.day };
}

function asUtc(local: LocalDateTime): number {
  return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second, local.millisecond);
}

/** Milliseconds the zone is ahead of UTC at `instant`. */
function offsetAt(instant: number, timeZone: string): number {
  return asUtc(toLocal(instant, timeZone)) - instant;
}
