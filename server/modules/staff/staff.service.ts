/**
 * What staff do to accounts (DESIGN §8.2): disable and enable them, end their sessions, change their role
 * (admins) and their plan package. Each method asserts the authz rule first, changes the account and
 * writes its audit row in one transaction, then makes every instance forget the account's cached
 * credentials, so the change holds at once everywhere.
 *
 * Revoking another account's API key is `ApiKeyService.revoke` (one method for the owner and for staff);
 * the package change is `PlanAssignments.assign`, which payments share.
 */
import { LockMode } from '@mikro-orm/core';
import type { Database, Em } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError } from '../../errors/app-error.ts';
import * as authz from '../../authz/authz.ts';
import { Account, accountRoles, type AccountRole, type IAccount } from '../account/account.entity.ts';
import { view, type AccountView } from '../account/account.service.ts';
import type { AuditLog } from '../audit/audit.service.ts';
import { checkReason, optionalReason } from '../audit/reason.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { PlanAssignments } from '../plan/plan-assignment.service.ts';

/** Every staff change carries the request it came from, for the audit log. */
export interface StaffRequest {
  requestId?: string | null;
}

export class StaffService {
  readonly #db: Database;
  readonly #audit: AuditLog;
  readonly #identity: IdentityService;
  readonly #plans: PlanAssignments;

  constructor(db: Database, deps: { audit: AuditLog; identity: IdentityService; planAssignments: PlanAssignments }) {
    this.#db = db;
    this.#audit = deps.audit;
    this.#identity = deps.identity;
    this.#plans = deps.planAssignments;
  }

  /**
   * Disables an account: every credential of it is refused with 401 `account_disabled` and its sessions
   * (browsers and device logins) are ended, on every instance at once. Its API keys are kept, refused
   * until it is enabled again. Disabling a disabled account changes nothing.
   */
  async disableAccount(actor: authz.Actor, accountId: string, options: StaffRequest & { reason: string }): Promise<AccountView> {
    authz.assert(actor, 'account:disable');
    const target = await this.#find(accountId);
    authz.assert(actor, 'account:disable', resource(target));
    const reason = checkReason(options.reason);
    const account = await this.#transaction(async (em) => {
      const row = await em.findOneOrFail(Account, { id: target.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const sessionsEnded = await revokeSessions(em, row.id);
      if (row.disabledAt) return row;
      row.disabledAt = new Date();
      await em.flush();
      await this.#audit.record(
        {
          actorId: actor.accountId,
          action: 'account:disable',
          targetType: 'account',
          targetId: row.id,
          before: { disabledAt: null },
          after: { disabledAt: row.disabledAt.toISOString(), sessionsEnded },
          reason,
          requestId: options.requestId,
        },
        em,
      );
      return row;
    });
    await this.#identity.invalidateAccount(account.id);
    return view(account);
  }

  /** Enables a disabled account: its API keys work again and its owner can sign in (ended sessions stay ended). */
  async enableAccount(actor: authz.Actor, accountId: string, options: StaffRequest & { reason?: string | null } = {}): Promise<AccountView> {
    authz.assert(actor, 'account:disable');
    const target = await this.#find(accountId);
    authz.assert(actor, 'account:disable', resource(target));
    const reason = optionalReason(options.reason);
    const account = await this.#transaction(async (em) => {
      const row = await em.findOneOrFail(Account, { id: target.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!row.disabledAt) return row;
      const before = { disabledAt: row.disabledAt.toISOString() };
      row.disabledAt = null;
      await em.flush();
      await this.#audit.record(
        { actorId: actor.accountId, action: 'account:enable', targetType: 'account', targetId: row.id, before, after: { disabledAt: null }, reason, requestId: options.requestId },
        em,
      );
      return row;
    });
    await this.#identity.invalidateAccount(account.id);
    return view(account);
  }

  /** Ends every session of an account (browsers and device-login tokens) on every instance; returns how many. */
  async endSessions(actor: authz.Actor, accountId: string, options: StaffRequest & { reason: string }): Promise<number> {
    authz.assert(actor, 'session:end-any');
    const target = await this.#find(accountId);
    authz.assert(actor, 'session:end-any', resource(target));
    const reason = checkReason(options.reason);
    const ended = await this.#transaction(async (em) => {
      const count = await revokeSessions(em, target.id);
      await this.#audit.record(
        { actorId: actor.accountId, action: 'session:end-any', targetType: 'account', targetId: target.id, after: { sessionsEnded: count }, reason, requestId: options.requestId },
        em,
      );
      return count;
    });
    await this.#identity.invalidateAccount(target.id);
    return ended;
  }

  /** Admins change an account's role (member, support, admin); never their own. */
  async setAccountRole(actor: authz.Actor, accountId: string, role: AccountRole, options: StaffRequest & { reason?: string | null } = {}): Promise<AccountView> {
    authz.assert(actor, 'staff:set-role');
    if (!accountRoles.includes(role)) throw new AppError('invalid_request', `role must be one of ${accountRoles.join(', ')}.`, { param: 'role' });
    const target = await this.#find(accountId);
    authz.assert(actor, 'staff:set-role', resource(target));
    const reason = optionalReason(options.reason);
    const account = await this.#transaction(async (em) => {
      const row = await em.findOneOrFail(Account, { id: target.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (row.role === role) return row;
      const before = { role: row.role };
      row.role = role;
      await em.flush();
      await this.#audit.record(
        { actorId: actor.accountId, action: 'staff:set-role', targetType: 'account', targetId: row.id, before, after: { role }, reason, requestId: options.requestId },
        em,
      );
      return row;
    });
    // The role travels in cached principals: drop them so the new rights apply to the next request.
    await this.#identity.invalidateAccount(account.id);
    return view(account);
  }

  /** Staff put an account on a plan package (until a date, or for good), with a reason. */
  setAccountPackage(actor: authz.Actor, accountId: string, packageId: string, options: StaffRequest & { reason: string; until?: Date | null }): Promise<AccountView> {
    return this.#plans.assign(actor, accountId, packageId, options);
  }

  async #find(accountId: string): Promise<IAccount> {
    const account = isUuid(accountId) ? await this.#db.orm.em.fork().findOne(Account, { id: accountId }) : null;
    if (!account) throw new AppError('not_found', isUuid(accountId) ? `No account ${accountId}.` : 'That is not an account id.', { param: 'accountId' });
    return account;
  }

  #transaction<T>(work: (em: Em) => Promise<T>): Promise<T> {
    return this.#db.orm.em.fork().transactional(work);
  }
}

function resource(account: IAccount): authz.AccountResource {
  return { type: 'account', id: account.id, role: account.role };
}

/** Revokes every live session of an account inside `em`'s transaction; returns how many. */
async function revokeSessions(em: Em, accountId: string): Promise<number> {
  const rows = await em
    .getConnection()
    .execute<{ id: string }[]>(
      `update "session" set "revoked_at" = now(), "updated_at" = now() where "account_id" = ? and "revoked_at" is null returning "id"`,
      [accountId],
      'all',
      em.getTransactionContext(),
    );
  return rows.length;
}
