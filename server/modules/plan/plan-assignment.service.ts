/**
 * Which plan package an account is on, and changing it: by staff with a reason (`assign`, audited as
 * `account:set-package`), or by trusted code such as payments after a paid order (`assignAsSystem`, audited
 * with no actor). A package may be given until a date; `expire()` (run every minute by each instance) then
 * returns the account to Free.
 *
 * A change takes effect at once everywhere: every instance drops the account's cached credentials (their
 * principal carries the package, which `/v1/models`, admission and the usage report read), and live usage
 * watchers are told the pools moved.
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
  readonly #freePackage: string;
  readonly #onError: (error: unknown) => void;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> = Promise.resolve();

  constructor(
    config: Config,
    db: Database,
    deps: { plans: PlanService; audit: AuditLog; identity: IdentityService; usage: UsageChangeListener },
    onError: (error: unknown) => void = () => undefined,
  ) {
    this.#db = db;
    this.#plans = deps.plans;
    this.#audit = deps.audit;
    this.#identity = deps.identity;
    this.#usage = deps.usage;
    this.#freePackage = config.plans.free.packages[0]!.id;
    this.#onError = onError;
  }

  /** Staff (`account:set-package`, web session) put an account on a package, with a reason. */
  async assign(actor: authz.Actor, accountId: string, packageId: string, options: AssignOptions): Promise<AccountView> {
    authz.assert(actor, 'account:set-package');
    const target = await this.#find(accountId);
    authz.assert(actor, 'account:set-package', { type: 'account', id: target.id, role: target.role });
    return this.#apply(actor.accountId, target.id, packageId, options);
  }

  /**
   * Trusted code (payments after a paid order, jobs) puts an account on a package. No authorization: the
   * caller has decided. Call it after your own transaction commits.
   */
  async assignAsSystem(accountId: string, packageId: string, options: AssignOptions): Promise<AccountView> {
    const target = await this.#find(accountId);
    return this.#apply(null, target.id, packageId, options);
  }

  /** Returns every account whose package ended to Free (audited, no actor); returns how many. */
  async expire(now = new Date()): Promise<number> {
    const expired = await this.#db.orm.em.fork().transactional(async (em) => {
      // SKIP LOCKED: instances running this at the same moment take disjoint rows, so each is audited once.
      const rows = await em.getConnection().execute<{ id: string; plan_package: string; plan_package_until: Date | string }[]>(
        `with ended as (
           select "id", "plan_package", "plan_package_until" from "account"
            where "plan_package_until" is not null and "plan_package_until" <= ? for update skip locked
         )
         update "account" a set "plan_package" = ?, "plan_package_until" = null, "updated_at" = ?
           from ended where a."id" = ended."id"
         returning a."id", ended."plan_package", ended."plan_package_until"`,
        [now, this.#freePackage, now],
        'all',
        em.getTransactionContext(),
      );
      for (const row of rows) {
        await this.#audit.record(
          {
            actorId: null,
            action: 'account:set-package',
            targetType: 'account',
            targetId: row.id,
            before: { planPackage: row.plan_package, planPackageUntil: new Date(row.plan_package_until).toISOString() },
            after: { planPackage: this.#freePackage, planPackageUntil: null },
            reason: 'The package period ended.',
          },
          em,
        );
      }
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

  async #apply(actorId: string | null, accountId: string, packageId: string, options: AssignOptions): Promise<AccountView> {
    if (!this.#plans.findPackage(packageId)) {
      const known = this.#plans.list().flatMap((plan) => plan.packages.map((pkg) => pkg.id));
      throw new AppError('invalid_request', bilingual('Unknown package {id}; the packages are {known}.', '没有套餐 {id}；可选的套餐有 {known}。', { id: JSON.stringify(packageId), known: known.join(', ') }), { param: 'packageId' });
    }
    const reason = checkReason(options.reason);
    const until = options.until ?? null;
    if (until !== null && (Number.isNaN(until.getTime()) || until.getTime() <= Date.now())) {
      throw new AppError('invalid_request', bilingual('until must be a time in the future (or null for no end).', 'until 必须是将来的时间（不设结束时间则为 null）。'), { param: 'until' });
    }
    const account = await this.#db.orm.em.fork().transactional(async (em: Em) => {
      const row = await em.findOneOrFail(Account, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const before = { planPackage: row.planPackage, planPackageUntil: row.planPackageUntil?.toISOString() ?? null };
      row.planPackage = packageId;
      row.planPackageUntil = until;
      await em.flush();
      await this.#audit.record(
        {
          actorId,
          action: 'account:set-package',
          targetType: 'account',
          targetId: accountId,
          before,
          after: { planPackage: packageId, planPackageUntil: until?.toISOString() ?? null },
          reason,
          requestId: options.requestId ?? null,
        },
        em,
      );
      return row;
    });
    await this.#announce([accountId]);
    return view(account);
  }

  /**
   * Tells every instance that these accounts' packages changed (drops cached credentials, wakes live usage
   * watchers). For trusted code that changed `account.plan_package` inside its own transaction (payments):
   * call it after that transaction committed.
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
