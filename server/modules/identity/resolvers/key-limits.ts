/** The limit columns of `api_key` (issue 51), as both key resolvers read them. */
import type { KeyLimits } from '../../../authz/principal.ts';

/** Select these from `api_key k`. */
export const keyLimitColumns = `k."budget_day_micros", k."budget_month_micros", k."requests_per_minute", k."allowed_models", k."expires_at" as "key_expires_at"`;

export interface KeyLimitRow {
  budget_day_micros: string | number | null;
  budget_month_micros: string | number | null;
  requests_per_minute: number | null;
  allowed_models: string[] | string | null;
  key_expires_at: Date | string | null;
}

/** The key's limits, or undefined when it has none (the common case: admission then checks nothing more). */
export function keyLimitsOf(row: KeyLimitRow): KeyLimits | undefined {
  const models = typeof row.allowed_models === 'string' ? (JSON.parse(row.allowed_models) as string[] | null) : row.allowed_models;
  const limits: KeyLimits = {
    budgetDayMicros: row.budget_day_micros === null ? null : Number(row.budget_day_micros),
    budgetMonthMicros: row.budget_month_micros === null ? null : Number(row.budget_month_micros),
    requestsPerMinute: row.requests_per_minute,
    allowedModels: models ?? null,
  };
  const any = limits.budgetDayMicros !== null || limits.budgetMonthMicros !== null || limits.requestsPerMinute !== null || limits.allowedModels !== null;
  return any ? limits : undefined;
}

export function keyExpiry(row: KeyLimitRow): number | null {
  return row.key_expires_at === null ? null : new Date(row.key_expires_at).getTime();
}
