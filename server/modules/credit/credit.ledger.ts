/**
 * Prepaid credit as a ledger of its own (issue 51 item 4): `credit_entry` rows are appended, never changed,
 * and the balance is their sum. `credit_balance` holds that sum per account so a spend can be checked
 * against it atomically: every append locks the account's balance row (`select … for update`), refuses what
 * would take it below zero, and writes the row and the entry in the same transaction — concurrent spends,
 * redemptions and purchases of one account queue on that lock, on any number of instances, and the
 * table's `check (balance_micros >= 0)` backs it up. An entry with a reference (an order, a code, a turn)
 * is appended at most once per account and kind.
 *
 * The metering pipeline pays a turn from credit through `reserveTurn` / `settleTurn` (admission.ts): the
 * worst case is spent at admission and held (`credit_hold`), what the turn did not use is refunded when it
 * settles — or, when its instance died first, when the sweeper finds the hold expired (sweeper.ts).
 */
import type { Config, ModelClass } from '../../config/config.ts';
import { money, type Micros, type Money } from '../../config/money.ts';
import type { Database, Em } from '../../db/orm.ts';
import type { LedgerEntry } from '../../metering/ledger.ts';
import type { ExpiredReservation } from '../../metering/pool.store.ts';
import type { CreditEvents } from './credit.events.ts';

export const creditKinds = ['purchase', 'code', 'spend', 'refund', 'adjustment'] as const;
export type CreditKind = (typeof creditKinds)[number];

export interface CreditEntryView {
  id: string;
  accountId: string;
  /** Signed: credit added is positive, spent is negative. */
  amount: Money;
  kind: CreditKind;
  /** What it is about: an order id (purchase), a code (code), a request id (spend, refund); null for adjustments. */
  reference: string | null;
  note: string | null;
  /** The balance once this entry was appended. */
  balanceAfter: Money;
  at: Date;
}

export interface CreditEntryRow {
  id: string | number;
  account_id: string;
  amount_micros: string | number;
  currency: string;
  kind: CreditKind;
  reference: string | null;
  note: string | null;
  balance_after_micros: string | number;
  at: Date | string;
}

export type AppendResult =
  | { ok: true; entry: CreditEntryView }
  /** The same (account, kind, reference) was appended before: nothing changed. */
  | { ok: false; reason: 'duplicate' }
  /** It would take the balance below zero: nothing changed. */
  | { ok: false; reason: 'insufficient'; balanceMicros: Micros };

export interface AppendInput {
  accountId: string;
  amountMicros: Micros;
  kind: CreditKind;
  reference: string | null;
  note?: string | null;
}

export function entryView(row: CreditEntryRow): CreditEntryView {
  return {
    id: String(row.id),
    accountId: row.account_id,
    amount: money(Number(row.amount_micros), row.currency),
    kind: row.kind,
    reference: row.reference,
    note: row.note,
    balanceAfter: money(Number(row.balance_after_micros), row.currency),
    at: new Date(row.at),
  };
}

export class CreditLedger {
  readonly #db: Database;
  readonly #currency: string;
  readonly #events: CreditEvents;
  /** A credit hold lives as long as a pool reservation: a live turn settles well before (pipeline.ts). */
  readonly #holdTtlMs: number;

  constructor(config: Config, db: Database, events: CreditEvents) {
    this.#db = db;
    this.#holdTtlMs = config.gateway.reservationTtlSeconds * 1000;
    this.#currency = config.currency;
    this.#events = events;
  }

  get currency(): string {
    return this.#currency;
  }

  /** Appends one entry in its own transaction, and tells the account's watchers once it committed. */
  async append(input: AppendInput): Promise<AppendResult> {
    const result = await this.#db.orm.em.fork().transactional((tx) => this.appendWithin(tx, input));
    if (result.ok) this.#events.changed(input.accountId);
    return result;
  }

  /**
   * Appends one entry inside the caller's transaction (a payment's, a redemption's). The caller tells the
   * watchers (`changed`) after its commit.
   */
  async appendWithin(tx: Em, input: AppendInput): Promise<AppendResult> {
    if (!Number.isSafeInteger(input.amountMicros)) throw new Error(`credit amount must be a safe integer of micros, got ${input.amountMicros}`);
    await tx.execute(`insert into credit_balance (account_id, currency) values (?, ?) on conflict (account_id) do nothing`, [input.accountId, this.#currency]);
    const [locked] = await tx.execute<{ balance_micros: string | number }[]>(`select balance_micros from credit_balance where account_id = ? for update`, [input.accountId]);
    const balance = Number(locked!.balance_micros);
    if (input.reference !== null) {
      const seen = await tx.execute(`select 1 from credit_entry where account_id = ? and kind = ? and reference = ?`, [input.accountId, input.kind, input.reference]);
      if (seen.length > 0) return { ok: false, reason: 'duplicate' };
    }
    const after = balance + input.amountMicros;
    if (after < 0) return { ok: false, reason: 'insufficient', balanceMicros: balance };
    await tx.execute(`update credit_balance set balance_micros = ?, updated_at = now() where account_id = ?`, [after, input.accountId]);
    const [row] = await tx.execute<CreditEntryRow[]>(
      `insert into credit_entry (account_id, amount_micros, currency, kind, reference, note, balance_after_micros) values (?, ?, ?, ?, ?, ?, ?)
       returning id, account_id, amount_micros, currency, kind, reference, note, balance_after_micros, at`,
      [input.accountId, input.amountMicros, this.#currency, input.kind, input.reference, input.note ?? null, after],
    );
    return { ok: true, entry: entryView(row!) };
  }

  changed(accountId: string): void {
    this.#events.changed(accountId);
  }

  /** The account's balance and whether it pays from credit when its pools are exhausted. */
  async balance(accountId: string): Promise<{ balanceMicros: Micros; payFromCredit: boolean }> {
    const rows = await this.#db.orm.em.fork().execute<{ balance_micros: string | number; pay_from_credit: boolean }[]>(
      `select balance_micros, pay_from_credit from credit_balance where account_id = ?`,
      [accountId],
    );
    return { balanceMicros: Number(rows[0]?.balance_micros ?? 0), payFromCredit: rows[0]?.pay_from_credit ?? false };
  }

  async paysFromCredit(accountId: string): Promise<boolean> {
    return (await this.balance(accountId)).payFromCredit;
  }

  async setPayFromCredit(accountId: string, on: boolean): Promise<void> {
    await this.#db.orm.em
      .fork()
      .execute(
        `insert into credit_balance (account_id, currency, pay_from_credit) values (?, ?, ?) on conflict (account_id) do update set pay_from_credit = excluded.pay_from_credit, updated_at = now()`,
        [accountId, this.#currency, on],
      );
    this.#events.changed(accountId);
  }

  /**
   * A turn whose pools are exhausted, paid from credit: spends its worst case now if the payer opted in and
   * has that much, atomically, and holds it (`credit_hold`) until the turn settles or the sweeper finds it
   * abandoned. False when it did not opt in or has too little (the caller answers 402).
   */
  async reserveTurn(payerId: string, requestId: string, micros: Micros, modelClass: ModelClass): Promise<boolean> {
    const spent = await this.#db.orm.em.fork().transactional(async (tx) => {
      const [opted] = await tx.execute<{ pay_from_credit: boolean }[]>(`select pay_from_credit from credit_balance where account_id = ?`, [payerId]);
      if (!opted?.pay_from_credit) return false;
      const result = await this.appendWithin(tx, { accountId: payerId, amountMicros: -micros, kind: 'spend', reference: requestId });
      if (!result.ok) return false;
      await tx.execute(`insert into credit_hold (request_id, account_id, class, reserved_micros, expires_at) values (?, ?, ?, ?, ?)`, [
        requestId,
        payerId,
        modelClass,
        micros,
        new Date(Date.now() + this.#holdTtlMs),
      ]);
      return true;
    });
    if (spent) this.#events.changed(payerId);
    return spent;
  }

  /** Gives back what a credit-paid turn did not use (its reservation minus its cost); once per turn. */
  async settleTurn(payerId: string, requestId: string, reservedMicros: Micros, costMicros: Micros): Promise<void> {
    await this.#release(requestId, payerId, Math.min(costMicros, reservedMicros));
  }

  /** Overwrites the holds' last checkpoints (one statement for every credit-paid stream of a round). */
  async checkpoint(items: readonly { requestId: string; entry: LedgerEntry }[]): Promise<void> {
    if (items.length === 0) return;
    await this.#db.orm.em
      .fork()
      .execute(
        `update credit_hold as h set checkpoint = x.entry from json_to_recordset(?::json) as x("requestId" varchar, entry jsonb) where h.request_id = x."requestId"`,
        [JSON.stringify(items)],
      );
  }

  async expired(now: number, limit: number): Promise<ExpiredReservation[]> {
    const rows = await this.#db.orm.em
      .fork()
      .execute<{ request_id: string; account_id: string; class: ModelClass; reserved_micros: string | number; checkpoint: LedgerEntry | null }[]>(
        `select request_id, account_id, class, reserved_micros, checkpoint from credit_hold where expires_at < ? order by expires_at limit ?`,
        [new Date(now), limit],
      );
    return rows.map((row) => ({
      requestId: row.request_id,
      payerId: row.account_id,
      class: row.class,
      reservedMicros: Number(row.reserved_micros),
      instanceId: null,
      checkpoint: row.checkpoint,
    }));
  }

  settleExpired(requestId: string, payerId: string, costMicros: Micros): Promise<boolean> {
    return this.#release(requestId, payerId, costMicros);
  }

  /**
   * Ends a turn's hold and refunds `reserved − cost` in one transaction: of the turn's own settlement and
   * any number of sweepers, only the one that deletes the row gives anything back.
   */
  async #release(requestId: string, payerId: string, costMicros: Micros): Promise<boolean> {
    const released = await this.#db.orm.em.fork().transactional(async (tx) => {
      const [hold] = await tx.execute<{ reserved_micros: string | number }[]>(`delete from credit_hold where request_id = ? and account_id = ? returning reserved_micros`, [requestId, payerId]);
      if (!hold) return { ended: false, refunded: false };
      const reserved = Number(hold.reserved_micros);
      const unused = reserved - Math.min(Math.max(0, costMicros), reserved);
      if (unused <= 0) return { ended: true, refunded: false };
      const refund = await this.appendWithin(tx, { accountId: payerId, amountMicros: unused, kind: 'refund', reference: requestId });
      return { ended: true, refunded: refund.ok };
    });
    if (released.refunded) this.#events.changed(payerId);
    return released.ended;
  }
}
