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
import * as authz from '../../authz/authz.ts';
import { Account, type IAccount } from '../account/account.entity.ts';
import { accountRoles, type AccountRole } from '../../authz/principal.ts';
import { view, type AccountView } from '../account/account.service.ts';
import type { ApiKeyService, ApiKeyView } from '../api-key/api-key.service.ts';
import type { AuditLog, AuditPage } from '../audit/audit.service.ts';
import { checkReason, optionalReason } from '../audit/reason.ts';
import type { AuditAction } from '../audit/audit.vocabulary.ts';
import { assertAudited } from '../audit/self-decision.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { Payer } from '../../authz/principal.ts';
import type { PlanAssignments } from '../plan/plan-assignment.service.ts';
import type { SessionService, SessionView } from '../session/session.service.ts';
import type { HistoryPageArgs, UsageHistoryPage, UsageRecord } from '../usage/usage.history.ts';
import type { UsageReport, UsageService } from '../usage/usage.service.ts';
import { accountColumns, accountView, accountsMatch, type AccountRow } from './account-match.ts';

/** Every staff change carries the request it came from, for the audit log. */
export interface StaffRequest {
  requestId?: string | null;
}

export interface AccountPage {
  nodes: AccountView[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

export interface AccountSearch {
  /**
   * An account id (exact), the start of an email address (any case), `@` and the start of its domain, or
   * a domain (`acme.com`: addresses starting so, and addresses at it); empty or absent: every account.
   */
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
  /** The actor's role in a target organisation: staff never act on one they belong to. */
  organisationRoles: authz.OrganisationRoleLookup;
}

export class StaffService {
  readonly #db: Database;
  readonly #audit: AuditLog;
  readonly #identity: IdentityService;
  readonly #plans: PlanAssignments;
  readonly #usage: UsageService;
  readonly #apiKeys: ApiKeyService;
  readonly #sessions: SessionService;
  readonly #organisationRoles: authz.OrganisationRoleLookup;

  constructor(db: Database, deps: StaffDeps) {
    this.#db = db;
    this.#audit = deps.audit;
    this.#identity = deps.identity;
    this.#plans = deps.planAssignments;
    this.#usage = deps.usage;
    this.#apiKeys = deps.apiKeys;
    this.#sessions = deps.sessions;
    this.#organisationRoles = deps.organisationRoles;
  }

  /**
   * Accounts, newest first, keyset-paginated on (created_at, id): all of them, the one with an id, or those
   * whose email (or its domain, after an `@` or when the text reads as one) starts with the search text —
   * index range scans (`account-match.ts`), so a search stays fast at a million accounts.
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
      const match = accountsMatch(search);
      where.push(match.sql);
      params.push(...match.params);
    }
    if (query.after) {
      const cursor = decodeAccountCursor(query.after);
      where.push(`("created_at", "id") < (timestamptz 'epoch' + ? * interval '1 microsecond', ?)`);
      params.push(cursor.createdUs, cursor.id);
    }
    params.push(first + 1);
    const rows = await this.#db.orm.em.getConnection().execute<AccountRow[]>(accountListSql(where), params, 'all');
    const page = rows.slice(0, first);
    const last = page.at(-1);
    return {
      nodes: page.map(accountView),
      pageInfo: { hasNextPage: rows.length > first, endCursor: last ? encodeAccountCursor(String(last.created_us), last.id) : null },
    };
  }

  /** One account, or null when there is none with that id. */
  async findAccount(actor: authz.Actor, accountId: string): Promise<AccountView | null> {
    return (await this.findAccounts(actor, [accountId]))[0]!;
  }

  /** Several accounts in one query (a page's applicants), in the order of the ids; null where there is none. */
  async findAccounts(actor: authz.Actor, accountIds: readonly string[]): Promise<(AccountView | null)[]> {
    authz.assert(actor, 'account:read');
    const ids = [...new Set(accountIds.filter(isUuid))];
    const accounts = ids.length > 0 ? await this.#db.orm.em.fork().find(Account, { id: { $in: ids } }) : [];
    const byId = new Map(accounts.map((account) => [account.id, view(account)]));
    return accountIds.map((id) => byId.get(id) ?? null);
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

  /** Any account's request by the id its client saw (mbr_…); null when there is none. */
  request(actor: authz.Actor, requestId: string): Promise<UsageRecord | null> {
    authz.assert(actor, 'account:read');
    return this.#usage.anyRequest(requestId);
  }

  /** The account a request's pools belonged to (staff reading a request). */
  async payerOfRequest(actor: authz.Actor, record: UsageRecord): Promise<AccountView | null> {
    return this.findAccount(actor, record.payerId);
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
    await this.#assertOn(actor, 'account:disable', 'account:disable', target, options.requestId);
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
    await this.#assertOn(actor, 'account:disable', 'account:enable', target, options.requestId);
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
    await this.#assertOn(actor, 'staff:set-role', 'staff:set-role', target, options.requestId);
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

  /**
   * The rule for `action` on this account, with the actor's role in it when it is an organisation; a
   * refused decision on themselves (their account, their organisation) is audited as `<attempt>:denied`.
   */
  async #assertOn(actor: authz.Actor, action: 'account:disable' | 'staff:set-role', attempt: AuditAction, target: IAccount, requestId: string | null | undefined): Promise<void> {
    const membership = actor && target.kind === 'organisation' ? await this.#organisationRoles.roleOf(actor.accountId, target.id) : null;
    await assertAudited(this.#audit, { action: attempt, targetType: 'account', targetId: target.id, requestId }, actor, action, { ...resource(target), membership });
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

/** The accounts list's query: `where` conditions, then the page size. Exported for the plan test. */
export function accountListSql(where: string[]): string {
  return `select ${accountColumns('"account"')}
     from "account"
    ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
    order by "created_at" desc, "id" desc limit ?`;
}

/** Staff look at an account as the payer of its own requests (an organisation's page passes its own payer). */
function payerOf(account: AccountView): Payer {
  return { kind: account.kind === 'organisation' ? 'organisation' : 'account', id: account.id, package: account.planPackage };
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

/** Revokes every live session of an account inside `em`'s transaction, MCP clients' OAuth grants included; returns how many. */
async function revokeSessions(em: Em, accountId: string): Promise<number> {
  const connection = em.getConnection();
  const rows = await connection.execute<{ id: string }[]>(
    `update "session" set "revoked_at" = now(), "updated_at" = now() where "account_id" = ? and "revoked_at" is null returning "id"`,
    [accountId],
    'all',
    em.getTransactionContext(),
  );
  const grants = await connection.execute<{ id: string }[]>(
    `update "oauth_authorization" set "revoked_at" = now(), "updated_at" = now() where "account_id" = ? and "status" = 'exchanged' and "revoked_at" is null returning "id"`,
    [accountId],
    'all',
    em.getTransactionContext(),
  );
  return rows.length + grants.length;
}
