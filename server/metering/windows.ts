/**
 * Calendar windows of the usage pools (DESIGN §4): day, ISO week (Monday) and month in the configured time
 * zone, as infra/calendar.ts cuts them. The gateway asks for the current windows on every request, so they
 * are computed once and cached until the earliest reset.
 */
import type { PoolWindow } from '../config/config.ts';
import { isoDate, periodsAt } from '../infra/calendar.ts';

export interface WindowInfo {
  window: PoolWindow;
  /** Stable id of this window instance, e.g. `d2026-11-21`, `w2026-11-16`, `m2026-11`. */
  key: string;
  startsAt: Date;
  resetsAt: Date;
}

export type CurrentWindows = Record<PoolWindow, WindowInfo>;

export class PoolWindows {
  readonly #timezone: string;
  #cached: CurrentWindows | null = null;
  #validUntil = 0;

  constructor(timezone: string) {
    this.#timezone = timezone;
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
    const { day, week, month } = periodsAt(now, this.#timezone);
    return {
      day: { window: 'day', key: `d${isoDate(day.first)}`, startsAt: day.start, resetsAt: day.end },
      week: { window: 'week', key: `w${isoDate(week.first)}`, startsAt: week.start, resetsAt: week.end },
      month: { window: 'month', key: `m${isoDate(month.first).slice(0, 7)}`, startsAt: month.start, resetsAt: month.end },
    };
  }
}
