/**
 * Which plan package an account is on, and the one place it changes. `assignWithin` is the writer: inside
 * the caller's transaction it moves `account.plan_package` and audits it as `account:set-package` — payments
 * (a paid order, a refund, a period end), an approved enterprise application, staff, and the expiry job all
 * go through it. Around it: staff with a reason (`assign`), trusted code such as jobs and tests
 * (`assignAsSystem`). A package may be given until a date; `expire()` (run every minute by each instance)
 * then returns the account to Free.
 *
 * A change takes effect at once everywhere: after the transaction commits, `announce` has every instance
 * drop the account's cached credentials (their principal carries the package, which `/v1/models`,
 * admission and the usage report read) and tells live usage watchers the pools moved.
 */
import { LockMode } from '@mikro-orm/core';
import type { Config } from '../../config/config.ts';
import type { Database, Em } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import * as authz from '../../authz/authz.ts';
import { Account, type IAccount } from '../account/account.entity.ts';
import { view, type AccountView } from '../account/account.service.ts';
import type { AuditLog } from '../audit/audit.service.ts';
import { checkReason } from '../audit/reason.ts';
import { assertAudited } from '../audit/self-decision.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { PlanService } from './plan.service.ts';

export interface AssignOptions {
  /** Why (shown in the audit log); required. */
  reason: string;
  /** When the package ends and the account returns to Free; omitted or null: no end. */
  until?: Date | null;
  /** The request that caused the change, for the audit log. */
  requestId?: string | null;
}

/** One package change, as `assignWithin` makes it. */
export interface PackageChange {
  packageId: string;
  /** When the package ends and the account returns to Free; null: no end. */
  until: Date | null;
  /** Why (shown in the audit log as written): the staff's words, or null where the action says it all (an approval without a note). */
  reason: string | null;
  /** Who decided: a staff member, or null for svc itself (a payment, a period end, an automatic approval). */
  actorId: string | null;
  /** The request that caused the change, for the audit log. */
  requestId?: string | null;
  /** Change only while the account is still on this package (staff may have moved it since). */
  onlyFrom?: string;
  /** Audit it even when it changes nothing: a staff decision is recorded as made. */
  alwaysAudit?: boolean;
}

/** What is told when an account's pools change (the usage module's live events). */
export interface UsageChangeListener {
  changed(accountId: string): void;
}

const expiryIntervalMs = 60_000;

export class PlanAssignments {
  readonly #db: Database;
  readonly #plans: PlanService;
  readonly #audit: AuditLog;
  readonly #identity: IdentityService;
  readonly #usage: UsageChangeListener;
  readonly #organisationRoles: authz.OrganisationRoleLookup;
  readonly #freePackage: string;
  readonly #onError: (error: unknown) => void;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> = Promise.resolve();

  constructor(
    config: Config,
    db: Database,
    deps: { plans: PlanService; audit: AuditLog; identity: IdentityService; usage: UsageChangeListener; organisationRoles: authz.OrganisationRoleLookup },
    onError: (error: unknown) => void = () => undefined,
  ) {
    this.#db = db;
    this.#plans = deps.plans;
    this.#audit = deps.audit;
    this.#identity = deps.identity;
    this.#usage = deps.usage;
    this.#organisationRoles = deps.organisationRoles;
    this.#freePackage = config.plans.free.packages[0]!.id;
    this.#onError = onError;
  }

  /**
   * Staff (`account:set-package`, web session) put an account on a package, with a reason — the only way
   * onto a price-0 package other than Free (enterprise). Never their own account nor an organisation they
   * belong to: that attempt is refused (403) and audited.
   */
  async assign(actor: authz.Actor, accountId: string, packageId: string, options: AssignOptions): Promise<AccountView> {
    authz.assert(actor, 'account:set-package');
    const target = await this.#find(accountId);
    const membership = target.kind === 'organisation' ? await this.#organisationRoles.roleOf(actor.accountId, target.id) : null;
    const staff = await assertAudited(
      this.#audit,
      { action: 'account:set-package', targetType: 'account', targetId: target.id, requestId: options.requestId },
      actor,
      'account:set-package',
      { type: 'account', id: target.id, role: target.role, membership },
    );
    return this.#assignNow(target.id, { ...this.#checked(packageId, options), actorId: staff.accountId, alwaysAudit: true });
  }

  /**
   * Trusted code (jobs, tests) puts an account on a package, in a transaction of its own. No authorization:
   * the caller has decided — but never on a free package other than Free, which only staff give. Code whose
   * own records change with the package (payments, approvals) calls `assignWithin` in its transaction.
   */
  async assignAsSystem(accountId: string, packageId: string, options: AssignOptions): Promise<AccountView> {
    const target = await this.#find(accountId);
    const found = this.#plans.findPackage(packageId);
    if (found && packageId !== this.#freePackage && found.pkg.price.amountMicros === 0) {
      throw new AppError('forbidden', bilingual('Package {id} costs nothing: only staff put an account on it.', '套餐 {id} 免费：只有工作人员可以为账户设置它。', { id: packageId }), { param: 'packageId' });
    }
    return this.#assignNow(target.id, { ...this.#checked(packageId, options), actorId: null, alwaysAudit: true });
  }

  /**
   * The one writer of `account.plan_package`: puts the account on `change.packageId` inside `tx` (its row
   * locked) and audits it there, so the package changes with the caller's own records or not at all.
   * Returns whether anything changed (nothing does when the account is already there, or no longer on
   * `onlyFrom`): then the caller calls `announce([accountId])` once `tx` has committed. The package is
   * the caller's to have checked: a payment already taken is applied even if config dropped its package.
   */
  async assignWithin(tx: Em, accountId: string, change: PackageChange): Promise<boolean> {
    const account = await tx.findOneOrFail(Account, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (change.onlyFrom !== undefined && account.planPackage !== change.onlyFrom) return false;
    const before = { planPackage: account.planPackage, planPackageUntil: account.planPackageUntil?.toISOString() ?? null };
    const after = { planPackage: change.packageId, planPackageUntil: change.until?.toISOString() ?? null };
    const changed = before.planPackage !== after.planPackage || before.planPackageUntil !== after.planPackageUntil;
    if (!changed && !change.alwaysAudit) return false;
    account.planPackage = change.packageId;
    account.planPackageUntil = change.until;
    await tx.flush();
    await this.#audit.record(
      { actorId: change.actorId, action: 'account:set-package', targetType: 'account', targetId: accountId, before, after, reason: change.reason, requestId: change.requestId ?? null },
      tx,
    );
    return changed;
  }

  /** Returns every account whose package ended to Free (audited, no actor); returns how many. */
  async expire(now = new Date()): Promise<number> {
    const expired = await this.#db.orm.em.fork().transactional(async (tx) => {
      // SKIP LOCKED: instances running this at the same moment take disjoint rows, so each is audited once.
      const rows = await tx
        .getConnection()
        .execute<{ id: string }[]>(
          `select "id" from "account" where "plan_package_until" is not null and "plan_package_until" <= ? for update skip locked`,
          [now],
          'all',
          tx.getTransactionContext(),
        );
      for (const { id } of rows) await this.assignWithin(tx, id, { packageId: this.#freePackage, until: null, reason: 'The package period ended.', actorId: null });
      return rows.map((row) => row.id);
    });
    await this.#announce(expired);
    return expired.length;
  }

  /**
   * Runs `expire()` every minute until `close()`. Not at once: start-up has enough to do (and in embedded
   * mode a query holds the event loop), and a minute late is on time for a package that ends.
   */
  start(intervalMs = expiryIntervalMs): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.#running = this.expire().catch(this.#onError);
    }, intervalMs).unref();
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  async #find(accountId: string): Promise<IAccount> {
    const account = isUuid(accountId) ? await this.#db.orm.em.fork().findOne(Account, { id: accountId }) : null;
    if (!account) throw new AppError('not_found', isUuid(accountId) ? bilingual('No account {id}.', '没有账户 {id}。', { id: accountId }) : bilingual('That is not an account id.', '这不是账户 ID。'), { param: 'accountId' });
    return account;
  }

  /** Checks what staff or trusted code asked for: a known package, a reason, an end in the future. */
  #checked(packageId: string, options: AssignOptions): Omit<PackageChange, 'actorId'> {
    if (!this.#plans.findPackage(packageId)) {
      const known = this.#plans.list().flatMap((plan) => plan.packages.map((pkg) => pkg.id));
      throw new AppError('invalid_request', bilingual('Unknown package {id}; the packages are {known}.', '没有套餐 {id}；可选的套餐有 {known}。', { id: JSON.stringify(packageId), known: known.join(', ') }), { param: 'packageId' });
    }
    const reason = checkReason(options.reason);
    const until = options.until ?? null;
    if (until !== null && (Number.isNaN(until.getTime()) || until.getTime() <= Date.now())) {
      throw new AppError('invalid_request', bilingual('until must be a time in the future (or null for no end).', 'until 必须是将来的时间（不设结束时间则为 null）。'), { param: 'until' });
    }
    return { packageId, until, reason, requestId: options.requestId ?? null };
  }

  /** `assignWithin` in a transaction of its own, announced once it committed. */
  async #assignNow(accountId: string, change: PackageChange): Promise<AccountView> {
    const account = await this.#db.orm.em.fork().transactional(async (tx: Em) => {
      await this.assignWithin(tx, accountId, change);
      return tx.findOneOrFail(Account, { id: accountId });
    });
    await this.#announce([accountId]);
    return view(account);
  }

  /**
   * Tells every instance that these accounts' packages changed (drops cached credentials, wakes live usage
   * watchers). Call it after the transaction in which `assignWithin` changed them committed.
   */
  async announce(accountIds: string[]): Promise<void> {
    await this.#announce(accountIds);
  }

  async #announce(accountIds: string[]): Promise<void> {
    for (const id of accountIds) {
      await this.#identity.invalidateAccount(id);
      this.#usage.changed(id);
    }
  }
}
