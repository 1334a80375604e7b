/**
 * Calendar windows of the usage pools (DESIGN §4): day, ISO week (Monday) and month in the configured time
 * zone. The gateway asks for the current windows on every request, so they are computed once and cached
 * until the earliest reset.
 */
import type { PoolWindow } from '../config/config.ts';

export interface WindowInfo {
  window: PoolWindow;
  /** Stable id of this window instance, e.g. `d2026-11-21`, `w2026-11-16`, `m2026-11`. */
  key: string;
  startsAt: Date;
  resetsAt: Date;
}

export type CurrentWindows = Record<PoolWindow, WindowInfo>;

interface LocalDate {
  year: number;
  month: number;
  day: number;
}

export class PoolWindows {
  readonly #timezone: string;
  readonly #format: Intl.DateTimeFormat;
  #cached: CurrentWindows | null = null;
  #validUntil = 0;

  constructor(timezone: string) {
    this.#timezone = timezone;
    this.#format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  get timezone(): string {
    return this.#timezone;
  }

  current(now = Date.now()): CurrentWindows {
    if (this.#cached && now < this.#validUntil && now >= this.#cached.day.startsAt.getTime()) return this.#cached;
    const windows = this.at(now);
    this.#cached = windows;
    this.#validUntil = windows.day.resetsAt.getTime();
    return windows;
  }

  /** The windows containing instant `now` (uncached). */
  at(now: number): CurrentWindows {
    const today = this.#localDate(now);
    const tomorrow = addDays(today, 1);
    const weekday = (new Date(Date.UTC(today.year, today.month - 1, today.day)).getUTCDay() + 6) % 7; // Monday = 0
    const monday = addDays(today, -weekday);
    const nextMonday = addDays(monday, 7);
    const monthStart = { year: today.year, month: today.month, day: 1 };
    const nextMonth = today.month === 12 ? { year: today.year + 1, month: 1, day: 1 } : { year: today.year, month: today.month + 1, day: 1 };
    return {
      day: { window: 'day', key: `d${iso(today)}`, startsAt: this.#midnight(today), resetsAt: this.#midnight(tomorrow) },
      week: { window: 'week', key: `w${iso(monday)}`, startsAt: this.#midnight(monday), resetsAt: this.#midnight(nextMonday) },
      month: { window: 'month', key: `m${iso(monthStart).slice(0, 7)}`, startsAt: this.#midnight(monthStart), resetsAt: this.#midnight(nextMonth) },
    };
  }

  #localDate(instant: number): LocalDate {
    const parts = this.#parts(instant);
    return { year: parts.year, month: parts.month, day: parts.day };
  }

  #parts(instant: number): LocalDate & { hour: number; minute: number; second: number } {
    const out: Record<string, number> = {};
    for (const part of this.#format.formatToParts(instant)) if (part.type !== 'literal') out[part.type] = Number(part.value);
    return out as unknown as LocalDate & { hour: number; minute: number; second: number };
  }

  /** The UTC instant of local midnight starting `date` in the time zone. */
  #midnight(date: LocalDate): Date {
    const target = Date.UTC(date.year, date.month - 1, date.day);
    let guess = target;
    // Two rounds converge for every real zone (offset changes happen at most once near midnight).
    for (let i = 0; i < 2; i++) {
      const p = this.#parts(guess);
      const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
      guess += target - asUtc;
    }
    return new Date(guess);
  }
}

function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function iso(date: LocalDate): string {
  return `${date.year}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')}`;
}
