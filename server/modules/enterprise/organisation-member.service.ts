/**
 * An organisation's people (DESIGN §8.1): members `(organisation, account, role owner|admin|member)` and
 * invitations waiting for an email to sign up. Every member reads them; the owner invites, removes and
 * changes roles — handing ownership over is one of those changes, within the limit of organisations one
 * account may own (ownership.ts).
 */
import { randomUUID } from 'node:crypto';
import type * as authz from '../../authz/authz.ts';
import type { OrganisationRole } from '../../authz/actions.ts';
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { Locale } from '../../i18n/locale.ts';
import { Account } from '../account/account.entity.ts';
import type { Throttle } from '../../rate-limit/throttle.ts';
import { OrganisationInvitation, OrganisationMember } from './enterprise.entity.ts';
import { memberNotFound } from './enterprise.errors.ts';
import { isEmailAddress } from './enterprise.input.ts';
import { invitationMail } from './enterprise.mail.ts';
import type { EnterpriseMailer } from './enterprise.mailer.ts';
import type { Organisations } from './organisation.service.ts';
import { claimOwnership } from './ownership.ts';

export interface MemberView {
  organisationId: string;
  accountId: string;
  email: string;
  role: OrganisationRole;
  joinedAt: Date;
}

export interface InvitationView {
  id: string;
  organisationId: string;
  email: string;
  role: 'admin' | 'member';
  invitedAt: Date;
}

export interface InviteResult {
  /** Set when the email already had an account: it is a member now. */
  member: MemberView | null;
  /** Set when it had none: the invitation waits for that email to sign up. */
  invitation: InvitationView | null;
}

/** Each sends an email: an owner cannot turn svc into a mailer. */
export const invitationsPerHourPerOrganisation = 50;
const hourMs = 3_600_000;

interface Deps {
  organisations: Organisations;
  mail: EnterpriseMailer;
  throttle: Throttle;
}

export class OrganisationMembers {
  readonly #config: Config;
  readonly #db: Database;
  readonly #deps: Deps;

  constructor(config: Config, db: Database, deps: Deps) {
    this.#config = config;
    this.#db = db;
    this.#deps = deps;
  }

  /** The members: the owner first, then admins, then members. */
  async list(actor: authz.Actor, organisationId: string): Promise<MemberView[]> {
    await this.#deps.organisations.access(actor, organisationId, 'organisation:read');
    const rows = await this.#db.orm.em.getConnection().execute<{ account_id: string; email: string; role: OrganisationRole; created_at: Date }[]>(
      `select m."account_id", a."email", m."role", m."created_at" from "organisation_member" m join "account" a on a."id" = m."account_id"
        where m."organisation_id" = ? order by case m."role" when 'owner' then 0 when 'admin' then 1 else 2 end, m."created_at", a."email"`,
      [organisationId],
      'all',
    );
    return rows.map((row) => ({ organisationId, accountId: row.account_id, email: row.email, role: row.role, joinedAt: new Date(row.created_at) }));
  }

  /** Invitations waiting for their email to sign up, newest first. */
  async invitations(actor: authz.Actor, organisationId: string): Promise<InvitationView[]> {
    await this.#deps.organisations.access(actor, organisationId, 'organisation:read');
    const rows = await this.#db.orm.em.fork().find(OrganisationInvitation, { organisationId, acceptedAt: null }, { orderBy: { createdAt: 'desc' } });
    return rows.map((row) => ({ id: row.id, organisationId, email: row.email, role: row.role, invitedAt: row.createdAt }));
  }

  /**
   * Owner: adds the account with this (verified) email at once, or records an invitation that becomes a
   * membership when that email signs up and verifies it (an email-code sign-in).
   */
  async invite(actor: authz.Actor, organisationId: string, input: { email: unknown; role?: unknown }): Promise<InviteResult> {
    const { organisation } = await this.#deps.organisations.access(actor, organisationId, 'organisation:members:manage');
    const email = typeof input.email === 'string' ? input.email.trim().toLowerCase() : '';
    if (!isEmailAddress(email)) throw new AppError('invalid_request', bilingual('email must be an email address.', 'email 必须是有效的邮箱地址。'), { param: 'email' });
    const role = input.role ?? 'member';
    if (role !== 'admin' && role !== 'member') throw new AppError('invalid_request', bilingual('role must be admin or member (an organisation has one owner).', 'role 必须是 admin 或 member（一个组织只有一位所有者）。'), { param: 'role' });
    await this.#deps.throttle.enforce([{ key: `enterprise-invite:organisation:${organisationId}`, limit: invitationsPerHourPerOrganisation, periodMs: hourMs }], {
      en: 'invitations',
      zh: '邀请过于频繁',
    });
    const mail = (locale: Locale) => invitationMail[locale]({ organisation: organisation.name, role, url: this.#deps.mail.consoleUrl });
    const em = this.#db.orm.em.fork();
    const account = await em.findOne(Account, { email });
    // Only an account that proved it owns the address joins at once; any other waits for that proof
    // (a sign-in by email code), so registering someone's address with a password gains nothing.
    if (account && account.kind === 'person' && account.emailVerifiedAt) {
      const existing = await em.findOne(OrganisationMember, { organisationId, accountId: account.id });
      if (existing) throw new AppError('conflict', bilingual('{email} is already a member of this organisation.', '{email} 已是该组织的成员。', { email }), { param: 'email' });
      const member = em.create(OrganisationMember, { id: randomUUID(), organisationId, accountId: account.id, role });
      await em.flush();
      await this.#deps.mail.toAccount(account.id, mail);
      return { member: { organisationId, accountId: account.id, email, role, joinedAt: member.createdAt }, invitation: null };
    }
    if (account && account.kind !== 'person') throw new AppError('invalid_request', bilingual('{email} cannot be invited.', '无法邀请 {email}。', { email }), { param: 'email' });
    const open = await em.findOne(OrganisationInvitation, { organisationId, email, acceptedAt: null });
    if (open) throw new AppError('conflict', bilingual('{email} is already invited to this organisation.', '{email} 已被邀请加入该组织。', { email }), { param: 'email' });
    const invitation = em.create(OrganisationInvitation, { id: randomUUID(), organisationId, email, role, invitedBy: actor!.accountId, acceptedAt: null });
    await em.flush();
    // No account, so no language of its own: the inviter's.
    await this.#deps.mail.toAddress(email, actor!.accountId, mail);
    return { member: null, invitation: { id: invitation.id, organisationId, email, role, invitedAt: invitation.createdAt } };
  }

  /** Owner: changes a member's role. Making someone owner hands ownership over (the old owner becomes admin). */
  async setRole(actor: authz.Actor, organisationId: string, accountId: string, role: OrganisationRole): Promise<MemberView> {
    await this.#deps.organisations.access(actor, organisationId, 'organisation:members:manage');
    if (!['owner', 'admin', 'member'].includes(role)) throw new AppError('invalid_request', bilingual('role must be owner, admin or member.', 'role 必须是 owner、admin 或 member。'), { param: 'role' });
    await this.#db.orm.em.fork().transactional(async (tx) => {
      const member = isUuid(accountId) ? await tx.findOne(OrganisationMember, { organisationId, accountId }) : null;
      if (!member) throw memberNotFound(accountId);
      if (member.accountId === actor!.accountId && role !== 'owner') {
        throw new AppError('invalid_request', bilingual('The owner cannot step down directly: make another member owner instead.', '所有者不能直接降级：请把另一位成员设为所有者。'), { param: 'role' });
      }
      if (role === 'owner' && member.accountId !== actor!.accountId) {
        await claimOwnership(tx, member.accountId, this.#config.enterprise.maxOwnedOrganisations);
        await tx.nativeUpdate(OrganisationMember, { organisationId, accountId: actor!.accountId }, { role: 'admin' });
      }
      member.role = role;
      await tx.flush();
    });
    const members = await this.list(actor, organisationId).catch(() => []);
    const updated = members.find((member) => member.accountId === accountId);
    if (!updated) throw memberNotFound(accountId);
    return updated;
  }

  /** Owner: removes a member (not themselves: an organisation keeps its owner). Pending invitations are removed by id too. */
  async remove(actor: authz.Actor, organisationId: string, accountId: string): Promise<boolean> {
    await this.#deps.organisations.access(actor, organisationId, 'organisation:members:manage');
    if (accountId === actor!.accountId) throw new AppError('invalid_request', bilingual('The owner cannot be removed; hand ownership to another member first.', '不能移除所有者；请先把所有权交给另一位成员。'), { param: 'accountId' });
    const em = this.#db.orm.em.fork();
    if (!isUuid(accountId)) throw memberNotFound(accountId);
    const removed = await em.nativeDelete(OrganisationMember, { organisationId, accountId });
    if (removed > 0) return true;
    const invitation = await em.nativeDelete(OrganisationInvitation, { organisationId, id: accountId, acceptedAt: null });
    if (invitation > 0) return true;
    throw memberNotFound(accountId);
  }
}
