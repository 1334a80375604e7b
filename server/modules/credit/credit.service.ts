/**
 * What members and staff do with prepaid credit (issue 51 item 4), with the rights checked first:
 * members read their balance and entries, opt in to paying from credit when a pool is exhausted, buy
 * credit through the checkout (a top-up order that appends a `purchase` entry when paid, exactly once:
 * inside the payment's transaction, which locks the order), and redeem codes; staff (admins) mint code
 * batches and export them as CSV. Every redemption and every batch is audited.
 *
 * An organisation's owner and admins do the same for the organisation (`organisationId`): its credit pays
 * its keys' requests once its pools are exhausted. Who may is the billing payers' one check
 * (`organisation:billing:read` / `…:manage`): a plain member gets 403, an outsider 404.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as authz from '../../authz/authz.ts';
import type { Config } from '../../config/config.ts';
import { formatMinor, minorDigits, minorToMicros, money, parseMicros, type Micros, type Money } from '../../config/money.ts';
import type { Database } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { AuditLog } from '../audit/audit.service.ts';
import type { BillingHooks, BillingOrders, Checkout, OrderView } from '../billing/billing.service.ts';
import type { BillingPayers, PayerAccess } from '../billing/payer.ts';
import { CREDIT_PACKAGE_ID } from '../billing/billing.service.ts';
import type { PaymentProviders } from '../billing/providers/registry.ts';
import { isPaymentProviderId, paymentProviderIds } from '../billing/providers/provider.ts';
import { csvCell } from '../../infra/csv.ts';
import { SingleFlight } from '../../infra/single-flight.ts';
import { entryView, type CreditEntryRow, type CreditEntryView, type CreditLedger } from './credit.ledger.ts';

export interface CreditSummary {
  accountId: string;
  balance: Money;
  payFromCredit: boolean;
  /** What the Credits page offers to buy (whole units of the currency), and the custom amount's bounds. */
  topUpAmounts: Money[];
  minTopUp: Money;
  maxTopUp: Money;
}

export interface CreditPage {
  entries: CreditEntryView[];
  /** Pass as `after` for the next (older) page; null on the last. */
  nextCursor: string | null;
}

export interface CodeBatchView {
  id: string;
  createdAt: Date;
  /** The admin who minted it; null for the operator's `svc credits mint`. */
  createdBy: string | null;
  value: Money;
  expiresAt: Date | null;
  usesPerCode: number;
  codeCount: number;
  /** Uses left over all codes of the batch. */
  usesLeft: number;
  note: string | null;
}

export interface MintInput {
  /** Decimal amount of the currency each code is worth ("5", "2.50"). */
  value: string | number;
  currency?: string | null;
  count: number;
  usesPerCode?: number | null;
  expiresAt?: Date | string | null;
  note?: string | null;
}

export const CREDIT_PAGE_DEFAULT = 50;
const CREDIT_PAGE_MAX = 200;
const MAX_CODES_PER_BATCH = 10_000;
/** No 0/O, 1/I/L: codes are read aloud and typed from paper. */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

export class CreditService {
  readonly #config: Config;
  readonly #db: Database;
  readonly #ledger: CreditLedger;
  readonly #audit: AuditLog;
  readonly #orders: BillingOrders;
  readonly #providers: PaymentProviders;
  readonly #payers: BillingPayers;
  readonly #summaries = new SingleFlight<CreditSummary>();

  constructor(
    config: Config,
    db: Database,
    deps: { ledger: CreditLedger; audit: AuditLog; orders: BillingOrders; providers: PaymentProviders; payers: BillingPayers },
  ) {
    this.#config = config;
    this.#db = db;
    this.#ledger = deps.ledger;
    this.#audit = deps.audit;
    this.#orders = deps.orders;
    this.#providers = deps.providers;
    this.#payers = deps.payers;
  }

  get currency(): string {
    return this.#ledger.currency;
  }

  /**
   * Whose credit the actor reads (`read`) or spends money on (`manage`): their own, or the organisation's
   * they name as its owner or an admin.
   */
  async accountOf(actor: authz.Actor, organisationId: string | null = null, access: PayerAccess = 'read'): Promise<string> {
    if (organisationId === null || organisationId === '') {
      authz.assert(actor, access === 'read' ? 'credit:read' : 'billing:manage');
      return actor.accountId;
    }
    return (await this.#payers.resolve(actor, organisationId, access)).payerId;
  }

  /**
   * The balance, opt-in and what can be bought: the member's own, or their organisation's. With a
   * `creditUpdated` wake-up's generation, the balance read is shared with the account's other
   * subscriptions woken with it (`SingleFlight`); the access check stays each caller's own.
   */
  async summary(actor: authz.Actor, organisationId: string | null = null, generation?: number): Promise<CreditSummary> {
    const accountId = await this.accountOf(actor, organisationId);
    return this.#summaries.run(accountId, generation, () => this.summaryOf(accountId));
  }

  async summaryOf(accountId: string): Promise<CreditSummary> {
    const { balanceMicros, payFromCredit } = await this.#ledger.balance(accountId);
    const { credits } = this.#config;
    const unit = (units: number) => money(units * 1_000_000, this.currency);
    return {
      accountId,
      balance: money(balanceMicros, this.currency),
      payFromCredit,
      topUpAmounts: credits.topUpAmounts.map(unit),
      minTopUp: unit(credits.minTopUp),
      maxTopUp: unit(credits.maxTopUp),
    };
  }

  /** The entries (the member's own, or their organisation's), newest first, a page at a time. */
  async entries(actor: authz.Actor, page: { first?: number | null; after?: string | null } = {}, organisationId: string | null = null): Promise<CreditPage> {
    const accountId = await this.accountOf(actor, organisationId);
    const first = page.first ?? CREDIT_PAGE_DEFAULT;
    if (!Number.isInteger(first) || first < 1 || first > CREDIT_PAGE_MAX) {
      throw new AppError('invalid_request', bilingual('first must be an integer from 1 to {max}.', 'first 必须是 1 到 {max} 之间的整数。', { max: CREDIT_PAGE_MAX }), { param: 'first' });
    }
    const after = page.after ? Number(page.after) : null;
    if (after !== null && !Number.isSafeInteger(after)) throw new AppError('invalid_request', bilingual('after is not a cursor from this list.', 'after 不是此列表的游标。'), { param: 'after' });
    const rows = await this.#db.orm.em
      .fork()
      .execute<CreditEntryRow[]>(
        `select id, account_id, amount_micros, currency, kind, reference, note, balance_after_micros, at from credit_entry
         where account_id = ? ${after === null ? '' : 'and id < ?'} order by id desc limit ?`,
        after === null ? [accountId, first + 1] : [accountId, after, first + 1],
      );
    const entries = rows.slice(0, first).map(entryView);
    return { entries, nextCursor: rows.length > first ? entries.at(-1)!.id : null };
  }

  /** Turns paying from credit (when a pool is exhausted) on or off for the member's own account or their organisation (web session). */
  async setPayFromCredit(actor: authz.Actor, on: boolean, organisationId: string | null = null): Promise<CreditSummary> {
    const accountId = await this.accountOf(actor, organisationId, 'manage');
    await this.#ledger.setPayFromCredit(accountId, on);
    return this.summaryOf(accountId);
  }

  /**
   * A top-up order: `amount` (a decimal of the credit's currency, one of the offered amounts or a custom one
   * within bounds) through `provider`, for the member's own account or the organisation they name (its
   * owner or an admin pays). Paid, it appends a `purchase` entry once.
   */
  async buy(
    actor: authz.Actor,
    input: { amount: string | number; provider: string; device?: 'desktop' | 'mobile' | null; organisationId?: string | null },
    options: { requestId?: string | null } = {},
  ): Promise<Checkout> {
    authz.assert(actor, 'billing:manage');
    const accountId = await this.accountOf(actor, input.organisationId ?? null, 'manage');
    const provider = input.provider;
    if (typeof provider !== 'string' || !isPaymentProviderId(provider)) {
      throw new AppError('invalid_request', bilingual('provider must be one of {providers}.', 'provider 必须是 {providers} 之一。', { providers: paymentProviderIds.join(', ') }), { param: 'provider' });
    }
    this.#providers.require(provider);
    const micros = parseMicros(typeof input.amount === 'number' ? input.amount : String(input.amount ?? ''));
    const { minTopUp, maxTopUp } = this.#config.credits;
    const digits = minorDigits(this.currency);
    const perMinor = 1_000_000 / 10 ** digits;
    if (micros === null || micros % perMinor !== 0 || micros < minTopUp * 1_000_000 || micros > maxTopUp * 1_000_000) {
      throw new AppError(
        'invalid_request',
        bilingual('amount must be from {min} to {max} {currency}, in whole cents at most.', 'amount 必须在 {min} 到 {max} {currency} 之间，最多精确到分。', {
          min: minTopUp,
          max: maxTopUp,
          currency: this.currency,
        }),
        { param: 'amount' },
      );
    }
    const back = accountId === actor.accountId ? '' : `org=${encodeURIComponent(accountId)}&`;
    const checkout = await this.#orders.createCredit(accountId, micros / perMinor, provider, this.currency, {
      placedBy: actor.accountId,
      device: input.device ?? undefined,
      returnUrl: `${this.#config.server.webUrl}/account/credits?${back}order=`,
    });
    await this.#audit.record({
      actorId: actor.accountId,
      action: 'order:create',
      targetType: 'order',
      targetId: checkout.order.id,
      before: null,
      after: { state: checkout.order.state, kind: 'credit', accountId, packageId: CREDIT_PACKAGE_ID, provider, amountMinor: checkout.order.amountMinor, currency: this.currency },
      reason: null,
      requestId: options.requestId ?? null,
    });
    return checkout;
  }

  /**
   * Redeems a code for the member's own account: once per account, and a single-use code once at all —
   * the code's row is locked for the redemption, so concurrent tries on any instance credit once. Audited.
   */
  async redeem(actor: authz.Actor, code: unknown, context: { ip?: string | null; requestId?: string | null } = {}): Promise<{ entry: CreditEntryView; summary: CreditSummary }> {
    authz.assert(actor, 'credit:redeem');
    const normalized = normalizeCode(code);
    const unknownCode = () => new AppError('not_found', bilingual('No such credit code, or it has been used up.', '没有这个充值码，或它已被用完。'), { param: 'code' });
    if (!normalized) throw unknownCode();
    const entry = await this.#db.orm.em.fork().transactional(async (tx) => {
      const [row] = await tx.execute<{ code: string; uses_left: number; value_micros: string | number; currency: string; expires_at: Date | string | null; batch_id: string }[]>(
        `select c.code, c.uses_left, b.value_micros, b.currency, b.expires_at, b.id as batch_id from credit_code c join credit_code_batch b on b.id = c.batch_id
         where c.code = ? for update of c`,
        [normalized],
      );
      if (!row || row.uses_left <= 0) throw unknownCode();
      if (row.expires_at && new Date(row.expires_at).getTime() <= Date.now()) {
        throw new AppError('invalid_request', bilingual('This credit code expired on {date}.', '此充值码已于 {date} 过期。', { date: new Date(row.expires_at).toISOString().slice(0, 10) }), { param: 'code' });
      }
      if (row.currency !== this.currency) throw new AppError('invalid_request', bilingual('This code is for {currency} credit.', '此充值码用于 {currency} 余额。', { currency: row.currency }), { param: 'code' });
      const redeemed = await tx.execute(`insert into credit_redemption (code, account_id, ip) values (?, ?, ?) on conflict do nothing returning code`, [normalized, actor.accountId, context.ip ?? null]);
      if (redeemed.length === 0) throw new AppError('conflict', bilingual('You have already redeemed this code.', '您已兑换过此充值码。'), { param: 'code' });
      await tx.execute(`update credit_code set uses_left = uses_left - 1 where code = ?`, [normalized]);
      const appended = await this.#ledger.appendWithin(tx, { accountId: actor.accountId, amountMicros: Number(row.value_micros), kind: 'code', reference: normalized, note: null });
      if (!appended.ok) throw new AppError('conflict', bilingual('You have already redeemed this code.', '您已兑换过此充值码。'), { param: 'code' });
      await this.#audit.record(
        {
          actorId: actor.accountId,
          action: 'credit:redeem',
          targetType: 'credit_code',
          targetId: normalized,
          before: { usesLeft: row.uses_left },
          after: { usesLeft: row.uses_left - 1, accountId: actor.accountId, amountMicros: Number(row.value_micros), batchId: row.batch_id },
          reason: null,
          requestId: context.requestId ?? null,
        },
        tx,
      );
      return appended.entry;
    });
    this.#ledger.changed(actor.accountId);
    return { entry, summary: await this.summaryOf(actor.accountId) };
  }

  /** Admin: mints a batch of codes, each worth `value`, audited; returns the batch and its codes. */
  async mint(actor: authz.Actor, input: MintInput, options: { requestId?: string | null } = {}): Promise<{ batch: CodeBatchView; codes: string[] }> {
    authz.assert(actor, 'credit:mint');
    return this.mintAsSystem(input, actor.accountId, options);
  }

  /** The operator's `svc credits mint` (on the server's database, like `svc admin create-user`): `by` null. */
  async mintAsSystem(input: MintInput, by: string | null, options: { requestId?: string | null } = {}): Promise<{ batch: CodeBatchView; codes: string[] }> {
    const valueMicros = parseMicros(typeof input.value === 'number' ? input.value : String(input.value ?? ''));
    if (valueMicros === null || valueMicros <= 0) throw new AppError('invalid_request', bilingual('value must be a positive amount such as 5 or 2.50.', 'value 必须是正数金额，例如 5 或 2.50。'), { param: 'value' });
    const currency = input.currency ?? this.currency;
    if (currency !== this.currency) throw new AppError('invalid_request', bilingual('Credit is kept in {currency}; codes must be too.', '余额以 {currency} 计，充值码也必须如此。', { currency: this.currency }), { param: 'currency' });
    const count = input.count;
    if (!Number.isInteger(count) || count < 1 || count > MAX_CODES_PER_BATCH) {
      throw new AppError('invalid_request', bilingual('count must be an integer from 1 to {max}.', 'count 必须是 1 到 {max} 之间的整数。', { max: MAX_CODES_PER_BATCH }), { param: 'count' });
    }
    const uses = input.usesPerCode ?? 1;
    if (!Number.isInteger(uses) || uses < 1 || uses > 1_000_000) throw new AppError('invalid_request', bilingual('usesPerCode must be a positive integer.', 'usesPerCode 必须是正整数。'), { param: 'usesPerCode' });
    const expiresAt = input.expiresAt == null || input.expiresAt === '' ? null : new Date(input.expiresAt);
    if (expiresAt && (Number.isNaN(expiresAt.getTime()) || expiresAt.getTime() <= Date.now())) {
      throw new AppError('invalid_request', bilingual('expiresAt must be a date in the future.', 'expiresAt 必须是将来的日期。'), { param: 'expiresAt' });
    }
    const note = input.note == null ? null : String(input.note).slice(0, 500);
    const id = randomUUID();
    const codes = Array.from({ length: count }, newCode);
    await this.#db.orm.em.fork().transactional(async (tx) => {
      await tx.execute(
        `insert into credit_code_batch (id, created_by, value_micros, currency, expires_at, uses_per_code, code_count, note) values (?, ?, ?, ?, ?, ?, ?, ?)`,
        [id, by, valueMicros, currency, expiresAt, uses, count, note],
      );
      for (let at = 0; at < codes.length; at += 1000) {
        const chunk = codes.slice(at, at + 1000);
        await tx.execute(`insert into credit_code (code, batch_id, uses_left) select unnest(?::text[]), ?, ?`, [`{${chunk.join(',')}}`, id, uses]);
      }
      await this.#audit.record(
        {
          actorId: by,
          action: 'credit:mint',
          targetType: 'credit_code_batch',
          targetId: id,
          before: null,
          after: { amountMicros: valueMicros, currency, codeCount: count, usesLeft: uses, expiresAt: expiresAt?.toISOString() ?? null, note },
          reason: note,
          requestId: options.requestId ?? null,
        },
        tx,
      );
    });
    return { batch: (await this.#batch(id))!, codes };
  }

  /** Admin: code batches, newest first. */
  async batches(actor: authz.Actor, first = 50): Promise<CodeBatchView[]> {
    authz.assert(actor, 'credit:mint');
    const rows = await this.#db.orm.em.fork().execute<BatchRow[]>(`${BATCH_SQL} group by b.id order by b.created_at desc, b.id limit ?`, [Math.min(Math.max(1, first), 200)]);
    return rows.map(batchView);
  }

  /** Admin: a batch's codes as CSV (code, value, currency, uses left, expires, note). */
  async batchCsv(actor: authz.Actor, batchId: string): Promise<string> {
    authz.assert(actor, 'credit:mint');
    return this.batchCsvOf(batchId);
  }

  /** A batch's CSV, for the operator's `svc credits mint`. */
  async batchCsvOf(batchId: string): Promise<string> {
    const batch = isUuid(batchId) ? await this.#batch(batchId) : null;
    if (!batch) throw new AppError('not_found', bilingual('No code batch {id}.', '没有充值码批次 {id}。', { id: batchId }), { param: 'id' });
    const rows = await this.#db.orm.em.fork().execute<{ code: string; uses_left: number }[]>(`select code, uses_left from credit_code where batch_id = ? order by code`, [batchId]);
    const lines = ['code,value,currency,uses_left,expires_at,note'];
    for (const row of rows) lines.push([row.code, batch.value.amount, batch.value.currency, row.uses_left, batch.expiresAt?.toISOString() ?? '', batch.note ?? ''].map(csvCell).join(','));
    return `${lines.join('\r\n')}\r\n`;
  }

  async #batch(id: string): Promise<CodeBatchView | null> {
    const [row] = await this.#db.orm.em.fork().execute<BatchRow[]>(`${BATCH_SQL} where b.id = ? group by b.id`, [id]);
    return row ? batchView(row) : null;
  }
}

/**
 * The billing library's hooks, with credit top-up orders handled here (inside the payment's transaction,
 * which locks the order row: the purchase is appended once per order however often the notice comes) and
 * every other order by `hooks` (the subscriptions).
 */
export function creditOrderHooks(hooks: BillingHooks, deps: { ledger: CreditLedger; audit: AuditLog; orderChanged: (order: OrderView) => void }): BillingHooks {
  const { ledger, audit } = deps;
  return {
    onPaid: async (order, tx) => {
      if (order.packageId !== CREDIT_PACKAGE_ID) return hooks.onPaid(order, tx);
      const micros = minorToMicros(order.amountMinor, order.currency);
      await ledger.appendWithin(tx, { accountId: order.accountId, amountMicros: micros, kind: 'purchase', reference: order.id, note: `${formatMinor(order.amountMinor, order.currency)} ${order.currency}` });
      await audit.record(
        {
          actorId: null,
          action: 'order:paid',
          targetType: 'order',
          targetId: order.id,
          before: { state: 'created' },
          after: { state: order.state, accountId: order.accountId, packageId: order.packageId, provider: order.provider, amountMinor: order.amountMinor, currency: order.currency, providerTradeNo: order.providerTradeNo },
          reason: null,
        },
        tx,
      );
    },
    onRefunded: async (order, tx, context) => {
      if (order.packageId !== CREDIT_PACKAGE_ID) return hooks.onRefunded?.(order, tx, context);
      await audit.record({ actorId: context.actorId, action: 'order:refund', targetType: 'order', targetId: order.id, before: { state: context.from ?? 'paid' }, after: { state: order.state }, reason: context.reason, requestId: context.requestId }, tx);
      // The money went back: so does the credit it bought, as far as it is still there (never below zero).
      const [row] = await tx.execute<{ balance_micros: string | number }[]>(`select balance_micros from credit_balance where account_id = ? for update`, [order.accountId]);
      const take = Math.min(Number(row?.balance_micros ?? 0), minorToMicros(order.amountMinor, order.currency));
      if (take > 0) await ledger.appendWithin(tx, { accountId: order.accountId, amountMicros: -take, kind: 'adjustment', reference: `refund:${order.id}`, note: context.reason });
    },
    onRefundUpdated: async (order, tx, context) => hooks.onRefundUpdated?.(order, tx, context),
    onClosed: async (order, tx) => hooks.onClosed?.(order, tx),
    changed: (order, from) => {
      if (order.packageId !== CREDIT_PACKAGE_ID) return hooks.changed?.(order, from);
      ledger.changed(order.accountId);
      deps.orderChanged(order);
    },
  };
}

interface BatchRow {
  id: string;
  created_at: Date | string;
  created_by: string | null;
  value_micros: string | number;
  currency: string;
  expires_at: Date | string | null;
  uses_per_code: number;
  code_count: number;
  uses_left: string | number;
  note: string | null;
}

const BATCH_SQL = `select b.id, b.created_at, b.created_by, b.value_micros, b.currency, b.expires_at, b.uses_per_code, b.code_count, b.note,
  coalesce(sum(c.uses_left), 0) as uses_left from credit_code_batch b left join credit_code c on c.batch_id = b.id`;

function batchView(row: BatchRow): CodeBatchView {
  return {
    id: row.id,
    createdAt: new Date(row.created_at),
    createdBy: row.created_by,
    value: money(Number(row.value_micros) as Micros, row.currency),
    expiresAt: row.expires_at ? new Date(row.expires_at) : null,
    usesPerCode: row.uses_per_code,
    codeCount: row.code_count,
    usesLeft: Number(row.uses_left),
    note: row.note,
  };
}

/** `SVC-XXXX-XXXX-XXXX-XXXX`: 16 characters of a 31-letter alphabet, ~79 random bits. */
function newCode(): string {
  let body = '';
  while (body.length < 16) {
    for (const byte of randomBytes(24)) {
      // 248 = 8 × 31: rejecting larger bytes keeps every letter equally likely.
      if (byte < 248 && body.length < 16) body += CODE_ALPHABET[byte % 31];
    }
  }
  return `SVC-${body.slice(0, 4)}-${body.slice(4, 8)}-${body.slice(8, 12)}-${body.slice(12)}`;
}

/** What the member typed, in the stored form (case, spaces and dashes do not matter); null when it cannot be a code. */
export function normalizeCode(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  const letters = value.toUpperCase().replace(/[\s-]/g, '');
  const body = letters.startsWith('SVC') ? letters.slice(3) : letters;
  if (!/^[A-Z0-9]{16}$/.test(body)) return null;
  return `SVC-${body.slice(0, 4)}-${body.slice(4, 8)}-${body.slice(8, 12)}-${body.slice(12)}`;
}
