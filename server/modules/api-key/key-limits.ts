/**
 * What a key's owner may limit it to (issue 51 item 1), shared by personal keys (`svc_live_`) and
 * organisation keys (`svc_ent_`): a spend cap per calendar day and per month (decimal amounts in the
 * configured currency, stored as micros), a requests-per-minute cap no higher than the plan's, a model
 * allow-list of models the plan includes, and an expiry. The metering pipeline enforces them
 * (metering/admission.ts); this module validates what is set and shows it with the key's spend so far.
 */
import type { Config } from '../../config/config.ts';
import { money, parseMicros, type Money } from '../../config/money.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { PoolWindows } from '../../metering/windows.ts';
import type { EntitlementCatalogue } from '../plan/entitlements.ts';
import type { IApiKey } from './api-key.entity.ts';

/** What a transport passes: each field absent = unchanged (on update), null = no limit. */
export interface KeyLimitsInput {
  budgetDay?: unknown;
  budgetMonth?: unknown;
  requestsPerMinute?: unknown;
  models?: unknown;
  expiresAt?: unknown;
}

/** The `api_key` columns a `KeyLimitsInput` sets (only those it names). */
export interface KeyLimitColumns {
  budgetDayMicros?: number | null;
  budgetMonthMicros?: number | null;
  requestsPerMinute?: number | null;
  allowedModels?: string[] | null;
  expiresAt?: Date | null;
}

/** A key's limits and what it has spent in the current day and month (settled turns, from the ledger). */
export interface KeyLimitsView {
  budgetDay: Money | null;
  budgetMonth: Money | null;
  requestsPerMinute: number | null;
  models: string[] | null;
  expiresAt: Date | null;
  spentToday: Money;
  spentThisMonth: Money;
}

const limitFields = ['budgetDay', 'budgetMonth', 'requestsPerMinute', 'models', 'expiresAt'] as const;

/** Reads the limit fields of a REST body (camelCase, as the GraphQL input). */
export function keyLimitsFromBody(body: Record<string, unknown>): KeyLimitsInput {
  const input: KeyLimitsInput = {};
  for (const field of limitFields) if (field in body) input[field] = body[field];
  return input;
}

export class KeyLimitPolicy {
  readonly #config: Config;
  readonly #entitlements: EntitlementCatalogue;
  readonly #windows: PoolWindows;
  readonly #db: Database;

  constructor(config: Config, entitlements: EntitlementCatalogue, windows: PoolWindows, db: Database) {
    this.#config = config;
    this.#entitlements = entitlements;
    this.#windows = windows;
    this.#db = db;
  }

  /** Validates the fields `input` names against the payer's package; 400 `invalid_request` naming the field. */
  parse(input: KeyLimitsInput, payerPackage: string, now = Date.now()): KeyLimitColumns {
    const out: KeyLimitColumns = {};
    const entitled = this.#entitlements.of(payerPackage);
    if (input.budgetDay !== undefined) out.budgetDayMicros = this.#amount(input.budgetDay, 'budgetDay');
    if (input.budgetMonth !== undefined) out.budgetMonthMicros = this.#amount(input.budgetMonth, 'budgetMonth');
    if (input.requestsPerMinute !== undefined && input.requestsPerMinute !== null) {
      const rpm = typeof input.requestsPerMinute === 'string' && /^\d+$/.test(input.requestsPerMinute.trim()) ? Number(input.requestsPerMinute) : input.requestsPerMinute;
      if (typeof rpm !== 'number' || !Number.isSafeInteger(rpm) || rpm < 1) {
        throw new AppError('invalid_request', bilingual('requestsPerMinute must be a whole number of at least 1.', 'requestsPerMinute 必须是不小于 1 的整数。'), { param: 'requestsPerMinute' });
      }
      if (rpm > entitled.requestsPerMinute) {
        throw new AppError(
          'invalid_request',
          bilingual(
            'requestsPerMinute {rpm} is above your plan\'s limit of {plan} requests per minute; a key may only lower it.',
            'requestsPerMinute {rpm} 高于您套餐每分钟 {plan} 次请求的上限；密钥只能设得更低。',
            { rpm, plan: entitled.requestsPerMinute },
          ),
          { param: 'requestsPerMinute' },
        );
      }
      out.requestsPerMinute = rpm;
    } else if (input.requestsPerMinute === null) out.requestsPerMinute = null;
    if (input.models !== undefined) out.allowedModels = this.#models(input.models, entitled.modelIds);
    if (input.expiresAt !== undefined) out.expiresAt = expiry(input.expiresAt, now);
    return out;
  }

  #amount(value: unknown, param: string): number | null {
    if (value === null || value === '') return null;
    const micros = typeof value === 'string' || typeof value === 'number' ? parseMicros(value) : null;
    if (micros === null || micros <= 0) {
      throw new AppError(
        'invalid_request',
        bilingual('{param} must be a positive amount in {currency} with at most six decimals, e.g. "5" or "5.00".', '{param} 必须是以 {currency} 计的正数金额，最多六位小数，例如 "5" 或 "5.00"。', {
          param,
          currency: this.#config.currency,
        }),
        { param },
      );
    }
    return micros;
  }

  #models(value: unknown, planModels: readonly string[]): string[] | null {
    if (value === null) return null;
    const list = typeof value === 'string' ? value.split(',') : value;
    if (!Array.isArray(list) || list.some((id) => typeof id !== 'string')) {
      throw new AppError('invalid_request', bilingual('models must be a list of model ids, or null for every model of your plan.', 'models 必须是模型 ID 列表；设为 null 表示套餐内的所有模型。'), { param: 'models' });
    }
    const ids = [...new Set((list as string[]).map((id) => id.trim()).filter((id) => id !== ''))];
    if (ids.length === 0) {
      throw new AppError('invalid_request', bilingual('models must name at least one model (or be null for every model of your plan).', 'models 至少要包含一个模型（或设为 null 表示套餐内的所有模型）。'), { param: 'models' });
    }
    const unknown = ids.filter((id) => !planModels.includes(id));
    if (unknown.length > 0) {
      throw new AppError(
        'invalid_request',
        bilingual('models: {unknown} is not a model of your plan. Valid ids: {valid}.', 'models：{unknown} 不是您套餐内的模型。可用的模型 ID：{valid}。', {
          unknown: unknown.join(', '),
          valid: planModels.join(', '),
        }),
        { param: 'models' },
      );
    }
    return ids;
  }

  /** The limits of these keys with their spend in the current day and month (one ledger query for all). */
  async views(keys: readonly IApiKey[]): Promise<Map<string, KeyLimitsView>> {
    const out = new Map<string, KeyLimitsView>();
    if (keys.length === 0) return out;
    const windows = this.#windows.current();
    const rows = await this.#db.orm.em.getConnection().execute<{ credential_id: string; day: string | number | null; month: string | number | null }[]>(
      `select credential_id,
              coalesce(sum(cost_micros) filter (where created_at >= ?), 0) as day,
              coalesce(sum(cost_micros), 0) as month
         from usage_ledger
        where credential_id in (${keys.map(() => '?').join(', ')}) and created_at >= ?
        group by credential_id`,
      [windows.day.startsAt, ...keys.map((key) => key.id), windows.month.startsAt],
      'all',
    );
    const spent = new Map(rows.map((row) => [row.credential_id, row]));
    const currency = this.#config.currency;
    for (const key of keys) {
      const row = spent.get(key.id);
      out.set(key.id, {
        budgetDay: key.budgetDayMicros == null ? null : money(Number(key.budgetDayMicros), currency),
        budgetMonth: key.budgetMonthMicros == null ? null : money(Number(key.budgetMonthMicros), currency),
        requestsPerMinute: key.requestsPerMinute ?? null,
        models: key.allowedModels ?? null,
        expiresAt: key.expiresAt ?? null,
        spentToday: money(Number(row?.day ?? 0), currency),
        spentThisMonth: money(Number(row?.month ?? 0), currency),
      });
    }
    return out;
  }
}

/** A day cap above the month cap could never be reached: refused (checked on the key as it will be stored). */
export function checkBudgets(key: { budgetDayMicros?: number | null; budgetMonthMicros?: number | null }): void {
  const day = key.budgetDayMicros;
  const month = key.budgetMonthMicros;
  if (day != null && month != null && Number(day) > Number(month)) {
    throw new AppError('invalid_request', bilingual('budgetDay must not be larger than budgetMonth.', 'budgetDay 不能大于 budgetMonth。'), { param: 'budgetDay' });
  }
}

/**
 * An expiry: an ISO date (`2027-01-31`: the key works through that day, UTC, and stops at the next
 * midnight) or an ISO date-time; it must be in the future. null = no expiry.
 */
function expiry(value: unknown, now: number): Date | null {
  if (value === null || value === '') return null;
  const invalid = () =>
    new AppError('invalid_request', bilingual('expiresAt must be a future ISO date ("2027-01-31") or date-time, or null.', 'expiresAt 必须是将来的 ISO 日期（"2027-01-31"）或日期时间，或为 null。'), {
      param: 'expiresAt',
    });
  let at: Date;
  if (value instanceof Date) at = value;
  else if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value.trim())) at = new Date(Date.parse(`${value.trim()}T00:00:00Z`) + 86_400_000);
  else if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value.trim())) at = new Date(value.trim());
  else throw invalid();
  if (Number.isNaN(at.getTime()) || at.getTime() <= now) throw invalid();
  return at;
}
