/**
 * Pools in the database, for embedded (single-instance) mode: the reservation against day, week and month
 * is one conditional SQL statement (`… where used + $n <= limit`, all three windows or none). Rate limits
 * and the stream cap are in process (one instance owns them).
 */
import type { ModelClass } from '../config/config.ts';
import { modelClasses, poolWindows } from '../config/config.ts';
import type { Micros } from '../config/money.ts';
import type { Database } from '../db/orm.ts';
import { LocalGcra } from '../rate-limit/gcra.ts';
import type { LedgerEntry } from './ledger.ts';
import { keyCapWindows, type Admission, type AdmissionRequest, type CheckpointRef, type ExpiredReservation, type KeyBudgetRefusal, type KeyCapRequest, type PoolStore, type PoolUsage, type ReservationRef } from './pool.store.ts';
import type { CurrentWindows } from './windows.ts';

const RESERVE_SQL = `
with locked as (
  select window_key, used_micros from usage_counter
  where payer_id = ? and class = ? and window_key in (?, ?, ?)
  for update
), limits(window_key, limit_micros, ord) as (
  values (?::text, ?::bigint, 1), (?::text, ?::bigint, 2), (?::text, ?::bigint, 3)
), verdict as (
  select count(*) = 3 and bool_and(l.used_micros + ? <= m.limit_micros) as ok
  from locked l join limits m on m.window_key = l.window_key
), bumped as (
  update usage_counter set used_micros = used_micros + ?
  where payer_id = ? and class = ? and window_key in (?, ?, ?) and (select ok from verdict)
  returning window_key
), reserved as (
  insert into usage_reservation (request_id, payer_id, class, day_key, week_key, month_key, reserved_micros, stream, expires_at, instance_id, cap_key_id)
  select ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::uuid where (select ok from verdict)
  returning request_id
)
select (select ok from verdict) as ok,
  (select m.ord from locked l join limits m on m.window_key = l.window_key
   where l.used_micros + ? > m.limit_micros order by m.ord limit 1) as failed,
  (select count(*) from reserved) as reserved,
  (select json_agg(json_build_object('k', window_key, 'u', used_micros)) from locked) as used
`;

/**
 * A capped key's day and month counters (issue 51): bumped by the worst case only when both stay within
 * their caps (a negative cap = none), the rows locked, so concurrent admissions of one key cannot overshoot.
 */
const KEY_RESERVE_CTES = `
with locked as (
  select window_key, used_micros from key_spend_counter where key_id = ? and window_key in (?, ?) for update
), limits(window_key, limit_micros, ord) as (
  values (?::text, ?::bigint, 1), (?::text, ?::bigint, 2)
), verdict as (
  select count(*) = 2 and bool_and(m.limit_micros < 0 or l.used_micros + ? <= m.limit_micros) as ok
  from locked l join limits m on m.window_key = l.window_key
), bumped as (
  update key_spend_counter set used_micros = used_micros + ?
  where key_id = ? and window_key in (?, ?) and (select ok from verdict)
  returning 1
)`;
const KEY_VERDICT = `
select (select ok from verdict) as ok,
  (select m.ord from locked l join limits m on m.window_key = l.window_key
   where m.limit_micros >= 0 and l.used_micros + ? > m.limit_micros order by m.ord limit 1) as failed,
  (select json_agg(json_build_object('k', window_key, 'u', used_micros)) from locked) as used
`;
const KEY_RESERVE_SQL = KEY_RESERVE_CTES + KEY_VERDICT;
/** A credit-paid turn's hold (`holdKeyCap`): the same reservation, and its record written in the same statement. */
const KEY_HOLD_SQL = `${KEY_RESERVE_CTES}, held as (
  insert into key_cap_hold (request_id, key_id, day_key, month_key, reserved_micros)
  select ?, ?::uuid, ?, ?, ? where (select ok from verdict)
  returning 1
)${KEY_VERDICT}`;

/** Ends a credit-paid turn's hold, moving the key's counters by cost − reserved; no row when there was none. */
const KEY_RELEASE_SQL = `
with h as (delete from key_cap_hold where request_id = ? returning key_id, day_key, month_key, reserved_micros), moved as (
  update key_spend_counter c set used_micros = greatest(0, c.used_micros + ? - h.reserved_micros)
  from h where c.key_id = h.key_id and c.window_key in (h.day_key, h.month_key)
  returning 1
)
select 1 as released from h
`;

/** Moves the key's counters with its reservation: data-modifying CTEs run whether or not they are read. */
const SETTLE_KEY_CTE = `k as (
  update key_spend_counter c set used_micros = greatest(0, c.used_micros + ? - r.reserved_micros)
  from r where r.cap_key_id is not null and c.key_id = r.cap_key_id and c.window_key in (r.day_key, r.month_key)
  returning 1
)`;

/** Moves only a reservation that still exists (see `PoolStore.settle`): a second settlement changes nothing. */
const SETTLE_SQL = `
with r as (delete from usage_reservation where request_id = ? returning reserved_micros, cap_key_id, day_key, month_key), ${SETTLE_KEY_CTE}
update usage_counter set used_micros = greatest(0, used_micros + ? - (select reserved_micros from r))
where payer_id = ? and class = ? and window_key in (?, ?, ?) and exists (select 1 from r)
returning 1 as existed
`;

const SETTLE_EXPIRED_SQL = `
with r as (delete from usage_reservation where request_id = ? returning *), ${SETTLE_KEY_CTE}
update usage_counter c set used_micros = greatest(0, c.used_micros + ? - r.reserved_micros)
from r where c.payer_id = r.payer_id and c.class = r.class and c.window_key in (r.day_key, r.week_key, r.month_key)
returning 1 as done
`;

export class SqlPoolStore implements PoolStore {
  readonly #db: Database;
  /** Embedded mode runs one instance: reservations another instance id made were left by a process that died. */
  readonly #instanceId: string;
  readonly #gcra = new LocalGcra();
  /** Open streams per payer (single instance). */
  readonly #streams = new Map<string, Set<string>>();
  /** Counter rows known to exist (account|class|windowKey of the day). */
  readonly #ensured = new Set<string>();

  constructor(db: Database, instanceId: string) {
    this.#db = db;
    this.#instanceId = instanceId;
  }

  #execute<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.#db.orm.em.getConnection().execute<T[]>(sql, params, 'all');
  }

  async admit(request: AdmissionRequest): Promise<Admission> {
    const rate = this.#gcra.check(request.rateRules);
    if (!rate.allowed) return { ok: false, reason: 'rate_limited', rate };
    const { payerId, windows, limits } = request;
    const cls = request.class;
    if (request.streamCap > 0 && (this.#streams.get(payerId)?.size ?? 0) >= request.streamCap) {
      return { ok: false, reason: 'stream_cap', cap: request.streamCap };
    }
    const keys = [windows.day.key, windows.week.key, windows.month.key];
    const ensuredKey = `${payerId}|${cls}|${keys.join('|')}`;
    if (!this.#ensured.has(ensuredKey)) {
      await this.#execute(
        `insert into usage_counter (payer_id, class, window_key, used_micros) values (?, ?, ?, 0), (?, ?, ?, 0), (?, ?, ?, 0) on conflict do nothing`,
        keys.flatMap((key) => [payerId, cls, key]),
      );
      if (this.#ensured.size > 100_000) this.#ensured.clear();
      this.#ensured.add(ensuredKey);
    }
    const n = request.reserveMicros;
    const cap = request.keyCap;
    if (cap) {
      const refused = await this.#reserveKey(cap, windows, n);
      if (refused) return refused;
    }
    let row: { ok: boolean; failed: number | null; reserved: number | string; used: { k: string; u: number | string }[] | string | null } | undefined;
    try {
      [row] = await this.#execute<NonNullable<typeof row>>(
        RESERVE_SQL,
        [
          payerId, cls, ...keys,
          keys[0], limits.day, keys[1], limits.week, keys[2], limits.month,
          n,
          n, payerId, cls, ...keys,
          request.requestId, payerId, cls, ...keys, n, request.streamCap > 0, new Date(Date.now() + request.ttlMs), this.#instanceId, cap?.keyId ?? null,
          n,
        ],
      );
      } catch (error) {
      if (cap) await this.#releaseKey(cap.keyId, windows, n).catch(() => undefined);
      throw error;
    }
    if (row?.ok && Number(row.reserved) === 1) {
      if (request.streamCap > 0) {
        let set = this.#streams.get(payerId);
        if (!set) this.#streams.set(payerId, (set = new Set()));
        set.add(request.requestId);
      }
      return { ok: true, rate };
    }
    if (cap) await this.#releaseKey(cap.keyId, windows, n);
    const index = (row?.failed ?? 1) - 1;
    const window = poolWindows[index]!;
    const used = typeof row?.used === 'string' ? (JSON.parse(row.used) as { k: string; u: number }[]) : (row?.used ?? []);
    const usedMicros = Number(used.find((entry) => entry.k === keys[index])?.u ?? 0);
    return { ok: false, reason: 'quota', window, usedMicros, limitMicros: limits[window] };
  }

  holdKeyCap(request: AdmissionRequest): Promise<KeyBudgetRefusal | null> {
    const cap = request.keyCap;
    if (!cap) return Promise.resolve(null);
    return this.#reserveKey(cap, request.windows, request.reserveMicros, request.requestId);
  }

  async readKeyCap(keyId: string, _payerId: string, windows: CurrentWindows): Promise<Record<'day' | 'month', Micros>> {
    const keys = keyCapWindows.map((window) => windows[window].key);
    const rows = await this.#execute<{ window_key: string; used_micros: number | string }>(`select window_key, used_micros from key_spend_counter where key_id = ? and window_key in (?, ?)`, [keyId, ...keys]);
    const used = (key: string) => Number(rows.find((row) => row.window_key === key)?.used_micros ?? 0);
    return { day: used(keys[0]!), month: used(keys[1]!) };
  }

  async releaseKeyCap(requestId: string, _payerId: string, costMicros: Micros): Promise<boolean> {
    const rows = await this.#execute(KEY_RELEASE_SQL, [requestId, costMicros]);
    return rows.length > 0;
  }

  /** Reserves `micros` against the key's caps (and records a credit-paid turn's hold, `holdFor`); the refusal, or null when reserved. */
  async #reserveKey(cap: KeyCapRequest, windows: CurrentWindows, micros: Micros, holdFor?: string): Promise<KeyBudgetRefusal | null> {
    const keys = keyCapWindows.map((window) => windows[window].key);
    await this.#execute(`insert into key_spend_counter (key_id, window_key, used_micros) values (?, ?, 0), (?, ?, 0) on conflict do nothing`, keys.flatMap((key) => [cap.keyId, key]));
    const [row] = await this.#execute<{ ok: boolean; failed: number | null; used: { k: string; u: number | string }[] | string | null }>(holdFor === undefined ? KEY_RESERVE_SQL : KEY_HOLD_SQL, [
      cap.keyId, ...keys,
      keys[0], cap.day ?? -1, keys[1], cap.month ?? -1,
      micros,
      micros, cap.keyId, ...keys,
      ...(holdFor === undefined ? [] : [holdFor, cap.keyId, ...keys, micros]),
      micros,
    ]);
    if (row?.ok) return null;
    const index = (row?.failed ?? 1) - 1;
    const window = keyCapWindows[index]!;
    const used = typeof row?.used === 'string' ? (JSON.parse(row.used) as { k: string; u: number }[]) : (row?.used ?? []);
    return { ok: false, reason: 'key_budget', window, usedMicros: Number(used.find((entry) => entry.k === keys[index])?.u ?? 0), limitMicros: cap[window] ?? 0 };
  }

  /** Gives back a key reservation whose pools refused the request. */
  async #releaseKey(keyId: string, windows: CurrentWindows, micros: Micros): Promise<void> {
    await this.#execute(`update key_spend_counter set used_micros = greatest(0, used_micros - ?) where key_id = ? and window_key in (?, ?)`, [
      micros,
      keyId,
      ...keyCapWindows.map((window) => windows[window].key),
    ]);
  }

  async settle(items: readonly { ref: ReservationRef; costMicros: Micros }[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (const { ref, costMicros } of items) {
      if (ref.stream) this.#streams.get(ref.payerId)?.delete(ref.requestId);
      const { day, week, month } = ref.windows;
      const rows = await this.#execute(SETTLE_SQL, [ref.requestId, costMicros, costMicros, ref.payerId, ref.class, day.key, week.key, month.key]);
      out.push(rows.length > 0);
    }
    return out;
  }

  async checkpoint(items: readonly { ref: CheckpointRef; entry: LedgerEntry }[]): Promise<void> {
    if (items.length === 0) return;
    await this.#execute(
      `update usage_reservation r set checkpoint = c.entry from jsonb_to_recordset(?::jsonb) as c(request_id varchar, entry jsonb) where r.request_id = c.request_id`,
      [JSON.stringify(items.map(({ ref, entry }) => ({ request_id: ref.requestId, entry })))],
    );
  }

  async expired(now: number, limit: number): Promise<ExpiredReservation[]> {
    return this.#reservations(`expires_at < ?`, [new Date(now)], limit);
  }

  async heartbeat(): Promise<boolean> {
    return false;
  }

  async orphaned(limit: number): Promise<ExpiredReservation[]> {
    return this.#reservations(`instance_id is distinct from ?`, [this.#instanceId], limit);
  }

  async leave(): Promise<void> {}

  async #reservations(where: string, params: unknown[], limit: number): Promise<ExpiredReservation[]> {
    const rows = await this.#execute<{ request_id: string; payer_id: string; class: ModelClass; reserved_micros: number | string; instance_id: string | null; checkpoint: LedgerEntry | string | null }>(
      `select request_id, payer_id, class, reserved_micros, instance_id, checkpoint from usage_reservation where ${where} order by expires_at limit ?`,
      [...params, limit],
    );
    return rows.map((row) => ({
      requestId: row.request_id,
      payerId: row.payer_id,
      class: row.class,
      reservedMicros: Number(row.reserved_micros),
      instanceId: row.instance_id,
      checkpoint: typeof row.checkpoint === 'string' ? (JSON.parse(row.checkpoint) as LedgerEntry) : row.checkpoint,
    }));
  }

  async settleExpired(requestId: string, costMicros: Micros): Promise<boolean> {
    for (const set of this.#streams.values()) set.delete(requestId);
    const rows = await this.#execute(SETTLE_EXPIRED_SQL, [requestId, costMicros, costMicros]);
    return rows.length > 0;
  }

  async read(payerId: string, windows: CurrentWindows): Promise<PoolUsage[]> {
    const keys = poolWindows.map((window) => windows[window].key);
    const rows = await this.#execute<{ class: ModelClass; window_key: string; used_micros: number | string }>(
      `select class, window_key, used_micros from usage_counter where payer_id = ? and window_key in (?, ?, ?)`,
      [payerId, ...keys],
    );
    return modelClasses.flatMap((cls) =>
      poolWindows.map((window) => {
        const row = rows.find((r) => r.class === cls && r.window_key === windows[window].key);
        return { class: cls, window, usedMicros: Number(row?.used_micros ?? 0) };
      }),
    );
  }
}
