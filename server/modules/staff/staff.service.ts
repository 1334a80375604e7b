/**
 * What staff do with accounts (DESIGN §8.2): look them up (search, and an account's pools, ledger, keys,
 * sessions and audit entries: `account:read`), disable and enable them, end their sessions, change their
 * role (admins) and their plan package. Each change asserts the authz rule first, changes the account and
 * writes its audit row in one transaction, then makes every instance forget the account's cached
 * credentials, so the change holds at once everywhere.
 *
 * Revoking another account's API key is `ApiKeyService.revoke` (one method for the owner and for staff);
 * the package change is `PlanAssignments.assign`, which payments share.
 */
import { LockMode } from '@mikro-orm/core';
import type { Database, Em } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { isLocale } from '../../i18n/locale.ts';
import * as authz from '../../authz/authz.ts';
import { Account, accountRoles, type AccountKind, type AccountRole, type IAccount } from '../account/account.entity.ts';
import { view, type AccountView } from '../account/account.service.ts';
import type { ApiKeyService, ApiKeyView } from '../api-key/api-key.service.ts';
import type { AuditLog, AuditPage } from '../audit/audit.service.ts';
import { checkReason, optionalReason } from '../audit/reason.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { Payer } from '../identity/principal.ts';
import type { PlanAssignments } from '../plan/plan-assignment.service.ts';
import type { SessionService, SessionView } from '../session/session.service.ts';
import type { HistoryPageArgs, UsageHistoryPage } from '../usage/usage.history.ts';
import type { UsageReport, UsageService } from '../usage/usage.service.ts';

/** Every staff change carries the request it came from, for the audit log. */
export interface StaffRequest {
  requestId?: string | null;
}

export interface AccountPage {
  nodes: AccountView[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

export interface AccountSearch {
  /** An account id (exact), or part of an email address (any case); empty or absent: every account. */
  search?: string | null;
  first?: number | null;
  after?: string | null;
}

export const ACCOUNTS_DEFAULT_PAGE = 25;
export const ACCOUNTS_MAX_PAGE = 100;
const maxSearchLength = 254;

export interface StaffDeps {
  audit: AuditLog;
  identity: IdentityService;
  planAssignments: PlanAssignments;
  usage: UsageService;
  apiKeys: ApiKeyService;
  sessions: SessionService;
}

interface AccountRow {
  id: string;
  created_us: string | number;
  created_at: Date | string;
  email: string;
  display_name: string | null;
  role: AccountRole;
  plan_package: string;
  plan_package_until: Date | string | null;
  disabled_at: Date | string | null;
  email_verified: boolean;
  has_password: boolean;
  locale: string | null;
  kind: AccountKind;
}

export class StaffService {
  readonly #db: Database;
  readonly #audit: AuditLog;
  readonly #identity: IdentityService;
  readonly #plans: PlanAssignments;
  readonly #usage: UsageService;
  readonly #apiKeys: ApiKeyService;
  readonly #sessions: SessionService;

  constructor(db: Database, deps: StaffDeps) {
    this.#db = db;
    this.#audit = deps.audit;
    this.#identity = deps.identity;
    this.#plans = deps.planAssignments;
    this.#usage = deps.usage;
    this.#apiKeys = deps.apiKeys;
    this.#sessions = deps.sessions;
  }

  /**
   * Accounts, newest first, keyset-paginated on (created_at, id): all of them, the one with an id, or those
   * whose email contains the search text.
   */
  async searchAccounts(actor: authz.Actor, query: AccountSearch = {}): Promise<AccountPage> {
    authz.assert(actor, 'account:read');
    const first = query.first ?? ACCOUNTS_DEFAULT_PAGE;
    if (!Number.isInteger(first) || first < 1 || first > ACCOUNTS_MAX_PAGE) {
      throw new AppError('invalid_request', bilingual('first must be an integer from 1 to {max}.', 'first 必须是 1 到 {max} 之间的整数。', { max: ACCOUNTS_MAX_PAGE }), { param: 'first' });
    }
    const search = (query.search ?? '').trim().toLowerCase();
    if (search.length > maxSearchLength) throw new AppError('invalid_request', bilingual('search must be at most {max} characters.', 'search 最多 {max} 个字符。', { max: maxSearchLength }), { param: 'search' });
    const where: string[] = [];
    const params: unknown[] = [];
    if (isUuid(search)) {
      where.push('"id" = ?');
      params.push(search);
    } else if (search) {
      where.push(`"email" like ? escape '!'`);
      params.push(`%${search.replace(/[!%_]/g, (c) => `!${c}`)}%`);
    }
    if (query.after) {
      const cursor = decodeAccountCursor(query.after);
      where.push(`("created_at", "id") < (timestamptz 'epoch' + ? * interval '1 microsecond', ?)`);
      params.push(cursor.createdUs, cursor.id);
    }
    params.push(first + 1);
    const rows = await this.#db.orm.em.getConnection().execute<AccountRow[]>(
      `select "id", (extract(epoch from "created_at") * 1000000)::bigint as "created_us", "created_at", "email", "display_name", "role",
              "plan_package", "plan_package_until", "disabled_at", "email_verified_at" is not null as "email_verified", "password_hash" is not null as "has_password", "locale", "kind"
         from "account"
        ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
        order by "created_at" desc, "id" desc limit ?`,
      params,
      'all',
    );
    const page = rows.slice(0, first);
    const last = page.at(-1);
    return {
      nodes: page.map(accountView),
      pageInfo: { hasNextPage: rows.length > first, endCursor: last ? encodeAccountCursor(String(last.created_us), last.id) : null },
    };
  }

  /** One account, or null when there is none with that id. */
  async findAccount(actor: authz.Actor, accountId: string): Promise<AccountView | null> {
    authz.assert(actor, 'account:read');
    const account = isUuid(accountId) ? await this.#db.orm.em.fork().findOne(Account, { id: accountId }) : null;
    return account ? view(account) : null;
  }

  /** An account's pools now: used, limit and reset per class and window. */
  accountUsage(actor: authz.Actor, account: AccountView): Promise<UsageReport> {
    authz.assert(actor, 'account:read');
    return this.#usage.report(payerOf(account));
  }

  /** An account's recent ledger rows, newest first. */
  accountHistory(actor: authz.Actor, account: AccountView, page: HistoryPageArgs): Promise<UsageHistoryPage> {
    authz.assert(actor, 'account:read');
    return this.#usage.history(payerOf(account), page);
  }

  /** An account's live personal API keys (prefix and last 4 only). */
  accountKeys(actor: authz.Actor, accountId: string): Promise<ApiKeyView[]> {
    authz.assert(actor, 'account:read');
    return this.#apiKeys.listForAccount(accountId);
  }

  /** An account's live sessions: browsers and device-login tokens. */
  accountSessions(actor: authz.Actor, accountId: string): Promise<SessionView[]> {
    authz.assert(actor, 'account:read');
    return this.#sessions.listForAccount(accountId, actor);
  }

  /** The audit entries about an account and its keys, newest first (`audit:read`). */
  accountAudit(actor: authz.Actor, accountId: string, page: { first?: number | null; after?: string | null }): Promise<AuditPage> {
    authz.assert(actor, 'account:read');
    return this.#audit.list(actor, { aboutAccountId: accountId }, page);
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
    if (!accountRoles.includes(role)) throw new AppError('invalid_request', bilingual('role must be one of {roles}.', 'role 必须是 {roles} 之一。', { roles: accountRoles.join(', ') }), { param: 'role' });
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
    if (!account) throw new AppError('not_found', isUuid(accountId) ? bilingual('No account {id}.', '没有账户 {id}。', { id: accountId }) : bilingual('That is not an account id.', '这不是账户 ID。'), { param: 'accountId' });
    return account;
  }

  #transaction<T>(work: (em: Em) => Promise<T>): Promise<T> {
    return this.#db.orm.em.fork().transactional(work);
  }
}

/** Staff look at an account as the payer of its own requests (an organisation's page passes its own payer). */
function payerOf(account: AccountView): Payer {
  return { kind: account.kind === 'organisation' ? 'organisation' : 'account', id: account.id, package: account.planPackage };
}

function accountView(row: AccountRow): AccountView {
  const date = (value: Date | string | null) => (value === null ? null : new Date(value));
  return {
    id: row.id,
    email: row.email,
    displayName: row.display_name,
    role: row.role,
    planPackage: row.plan_package,
    planPackageUntil: date(row.plan_package_until),
    disabledAt: date(row.disabled_at),
    emailVerified: row.email_verified,
    hasPassword: row.has_password,
    createdAt: new Date(row.created_at),
    locale: isLocale(row.locale) ? row.locale : null,
    kind: row.kind ?? 'person',
  };
}

function encodeAccountCursor(createdUs: string, id: string): string {
  return Buffer.from(`account:${createdUs}:${id}`).toString('base64url');
}

function decodeAccountCursor(cursor: string): { createdUs: string; id: string } {
  const match = /^account:(\d{1,16}):([0-9a-f-]{36})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match || !isUuid(match[2]!)) throw new AppError('invalid_request', bilingual('after is not a cursor this API returned.', 'after 不是本接口返回的游标。'), { param: 'after' });
  return { createdUs: match[1]!, id: match[2]! };
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
