/**
 * What an alert watches: a *meter* — something with a used amount, a limit and a window it resets on. A
 * payer's usage pools (class × window) are meters (`PoolMeters`), and so is each spend cap of its keys
 * (issue 51 item 1; `KeyMeters`): `key:<keyId>:day` and `key:<keyId>:month`. The monitor, the claims and
 * the channels are the same for both.
 *
 * A source answers twice: `meters` cheaply (pool counters, which also hold running reservations) to see
 * whether any threshold may have been crossed, and `settled` from the ledger to confirm it before anyone is
 * told — a reservation that is refunded must not announce 100 %.
 */
import { modelClasses, poolWindows, type ModelClass, type PoolWindow } from '../../config/config.ts';
import type { Micros } from '../../config/money.ts';
import type { Database } from '../../db/orm.ts';
import type { Bilingual } from '../../errors/app-error.ts';
import { billedInWindows, keyBilledInWindows } from '../../metering/ledger.ts';
import { keyCapWindows, type KeyCapWindow } from '../../metering/pool.store.ts';
import type { PoolWindows } from '../../metering/windows.ts';
import type { UsageService } from '../usage/usage.service.ts';

export type MeterKind = 'pool' | 'key';

export interface Meter {
  /** Stable id, the key thresholds and claims are stored under: `pool:fast:day`, `key:<keyId>:day`. */
  id: string;
  kind: MeterKind;
  window: PoolWindow;
  /** The current window instance (`d2026-12-07`, `m2026-12`): one alert per threshold per window key. */
  windowKey: string;
  resetsAt: Date;
  usedMicros: Micros;
  limitMicros: Micros;
  /** How people read it: "Fast models, daily". */
  label: Bilingual;
}

export interface MeterSource {
  /** The payer's meters now (what the member sees on the usage page). */
  meters(payerId: string): Promise<Meter[]>;
  /** What the ledger billed against each of `meters` in its current window, by meter id. */
  settled(payerId: string, meters: readonly Meter[]): Promise<Map<string, Micros>>;
  /** Whether `meterId` names one of this source's meters of the account (thresholds may be set on it). */
  accepts(accountId: string, meterId: string): Promise<boolean>;
}

const classLabels: Record<ModelClass, Bilingual> = { fast: { en: 'Fast models', zh: '快速模型' }, premium: { en: 'Premium models', zh: '高级模型' } };
const windowLabels: Record<PoolWindow, Bilingual> = { day: { en: 'daily', zh: '每日' }, week: { en: 'weekly', zh: '每周' }, month: { en: 'monthly', zh: '每月' } };

export function poolMeterId(cls: ModelClass, window: PoolWindow): string {
  return `pool:${cls}:${window}`;
}

/** Every meter id a payer's pools have (the settings page lists them all, used or not). */
export const poolMeterIds: readonly string[] = modelClasses.flatMap((cls) => poolWindows.map((window) => poolMeterId(cls, window)));


/** A payer's usage pools, as meters: the usage report (the same numbers as the usage page) and the ledger. */
export class PoolMeters implements MeterSource {
  readonly #usage: UsageService;
  readonly #db: Database;
  readonly #windows: PoolWindows;

  constructor(usage: UsageService, db: Database, windows: PoolWindows) {
    this.#usage = usage;
    this.#db = db;
    this.#windows = windows;
  }

  async meters(payerId: string): Promise<Meter[]> {
    // The report reads the payer's package from its row; the package given here is only its fallback.
    const report = await this.#usage.report({ kind: 'account', id: payerId, package: 'free' });
    const windows = this.#windows.current();
    return report.pools.map((pool) => ({
      id: poolMeterId(pool.class, pool.window),
      kind: 'pool' as const,
      window: pool.window,
      windowKey: windows[pool.window].key,
      resetsAt: pool.resetsAt,
      usedMicros: pool.used.amountMicros,
      limitMicros: pool.limit.amountMicros,
      label: { en: `${classLabels[pool.class].en}, ${windowLabels[pool.window].en}`, zh: `${classLabels[pool.class].zh}，${windowLabels[pool.window].zh}` },
    }));
  }

  async accepts(_accountId: string, meterId: string): Promise<boolean> {
    return poolMeterIds.includes(meterId);
  }

  async settled(payerId: string, meters: readonly Meter[]): Promise<Map<string, Micros>> {
    const billed = await billedInWindows(this.#db, this.#windows.current(), payerId);
    const settled = new Map<string, Micros>();
    for (const meter of meters) {
      const [, cls, window] = meter.id.split(':') as [string, ModelClass, PoolWindow];
      settled.set(meter.id, billed.find((row) => row.class === cls)?.billed[window] ?? 0);
    }
    return settled;
  }
}

const capWindowLabels: Record<KeyCapWindow, Bilingual> = { day: { en: 'daily cap', zh: '每日上限' }, month: { en: 'monthly cap', zh: '每月上限' } };
const KEY_METER = /^key:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):(day|month)$/;

export function keyMeterId(keyId: string, window: KeyCapWindow): string {
  return `key:${keyId}:${window}`;
}

interface CappedKey {
  id: string;
  name: string;
  prefix: string;
  budget_day_micros: string | number | null;
  budget_month_micros: string | number | null;
}

/**
 * The spend caps of a payer's live keys (personal keys of a member, organisation keys of an organisation),
 * as meters: used = what the ledger billed the key in the cap's day or month, counted as the key's
 * admission counters count it (`keyBilledInWindows`; a running request is not in it, so it never announces
 * 100 % for a reservation that is refunded). A payer without capped keys costs one indexed look-up.
 */
export class KeyMeters implements MeterSource {
  readonly #db: Database;
  readonly #windows: PoolWindows;

  constructor(db: Database, windows: PoolWindows) {
    this.#db = db;
    this.#windows = windows;
  }

  async meters(payerId: string): Promise<Meter[]> {
    const keys = await this.#db.orm.em
      .getConnection()
      .execute<CappedKey[]>(
        `select id, name, prefix, budget_day_micros, budget_month_micros from api_key
          where account_id = ? and revoked_at is null and (expires_at is null or expires_at > now())
            and (budget_day_micros is not null or budget_month_micros is not null)
          order by created_at, id`,
        [payerId],
        'all',
      );
    if (keys.length === 0) return [];
    const windows = this.#windows.current();
    const billed = new Map((await keyBilledInWindows(this.#db, windows, payerId)).map((row) => [row.keyId, row.billed]));
    const meters: Meter[] = [];
    for (const key of keys) {
      for (const window of keyCapWindows) {
        const limit = window === 'day' ? key.budget_day_micros : key.budget_month_micros;
        if (limit === null) continue;
        meters.push({
          id: keyMeterId(key.id, window),
          kind: 'key',
          window,
          windowKey: windows[window].key,
          resetsAt: windows[window].resetsAt,
          usedMicros: billed.get(key.id)?.[window] ?? 0,
          limitMicros: Number(limit),
          label: { en: `API key “${key.name}” (${key.prefix}…), ${capWindowLabels[window].en}`, zh: `API 密钥“${key.name}”（${key.prefix}…），${capWindowLabels[window].zh}` },
        });
      }
    }
    return meters;
  }

  async settled(payerId: string, meters: readonly Meter[]): Promise<Map<string, Micros>> {
    const billed = new Map((await keyBilledInWindows(this.#db, this.#windows.current(), payerId)).map((row) => [row.keyId, row.billed]));
    const settled = new Map<string, Micros>();
    for (const meter of meters) {
      const [, keyId, window] = KEY_METER.exec(meter.id) ?? [];
      if (keyId && window) settled.set(meter.id, billed.get(keyId)?.[window as KeyCapWindow] ?? 0);
    }
    return settled;
  }

  /** A key of the account (capped or not yet: thresholds may be chosen before the cap is set). */
  async accepts(accountId: string, meterId: string): Promise<boolean> {
    const keyId = KEY_METER.exec(meterId)?.[1];
    if (!keyId) return false;
    const rows = await this.#db.orm.em.getConnection().execute(`select 1 from api_key where id = ? and account_id = ? and revoked_at is null`, [keyId, accountId], 'all');
    return rows.length > 0;
  }
}
