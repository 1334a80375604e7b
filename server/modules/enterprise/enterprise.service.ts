/**
 * Enterprise organisations (DESIGN §8.1): applications and their review, organisations (accounts of kind
 * `organisation`, so metering, the ledger and live usage work unchanged), their members and invitations,
 * their `svc_ent_` keys with optional IP allow-lists, and the keys' connecting IPs.
 *
 * Every method checks its caller first (authz): staff review with `application:review`; an organisation's
 * members act by their role in it (`organisation:read`, `organisation:keys:create`, …). Someone who is not
 * a member of an organisation gets 404 for it, whatever the id — its existence is not theirs to learn.
 */
import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { Config } from '../../config/config.ts';
import type { Database, Em } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual, type Bilingual } from '../../errors/app-error.ts';
import * as authz from '../../authz/authz.ts';
import type { OrganisationAction, OrganisationRole } from '../../authz/actions.ts';
import { defaultLocale, isLocale, type Locale } from '../../i18n/locale.ts';
import { Account } from '../account/account.entity.ts';
import type { Mailer } from '../account/mailer.ts';
import type { MailText } from '../account/account.mail.ts';
import { ApiKey, type IApiKey } from '../api-key/api-key.entity.ts';
import { keyName, mintKey } from '../api-key/api-key.mint.ts';
import type { AuditLog } from '../audit/audit.service.ts';
import { checkReason, optionalReason } from '../audit/reason.ts';
import { tokenPrefixes } from '../identity/credential-token.ts';
import type { IdentityService, ResolvedCredential, BearerClient } from '../identity/identity.service.ts';
import type { Payer } from '../identity/principal.ts';
import type { PlanService } from '../plan/plan.service.ts';
import type { HistoryPageArgs, UsageHistoryPage } from '../usage/usage.history.ts';
import type { UsageReport, UsageService } from '../usage/usage.service.ts';
import type { Throttle } from '../rate-limit/throttle.ts';
import { allowListMatcher, normaliseIp, parseCidrs } from './cidr.ts';
import type { ConnectionRecorder } from './connections.ts';
import {
  EnterpriseApplication,
  EnterpriseApplicationEvent,
  Organisation,
  OrganisationInvitation,
  OrganisationMember,
  applicationKinds,
  applicationStates,
  type ActorKind,
  type ApplicationKind,
  type ApplicationState,
  type IEnterpriseApplication,
  type TimelineAction,
} from './enterprise.entity.ts';
import type { EnterpriseEvents } from './enterprise.events.ts';
import { applicationApprovedMail, applicationRejectedMail, applicationSubmittedMail, applicationWithdrawnMail, invitationMail } from './enterprise.mail.ts';

export interface ApplicationView {
  id: string;
  /** The applicant. */
  accountId: string;
  kind: ApplicationKind;
  organisation: string;
  contactEmail: string;
  website: string | null;
  country: string;
  useCase: string;
  expectedMonthlyTokens: number;
  state: ApplicationState;
  autoApproved: boolean;
  /** The organisation the approval created; null until approved. */
  organisationId: string | null;
  /** The package the organisation was given at approval. */
  packageId: string | null;
  submittedAt: Date;
  updatedAt: Date;
  decidedAt: Date | null;
  /** The approval note or the rejection reason (shown to the applicant). */
  decisionNote: string | null;
}

export interface TimelineEntry {
  id: string;
  at: Date;
  action: TimelineAction;
  actorKind: ActorKind;
  actorId: string | null;
  actorEmail: string | null;
  note: string | null;
}

export interface ApplicationPage {
  nodes: ApplicationView[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

export interface ApplicationInput {
  kind?: unknown;
  organisation?: unknown;
  contactEmail?: unknown;
  website?: unknown;
  country?: unknown;
  useCase?: unknown;
  expectedMonthlyTokens?: unknown;
}

export interface OrganisationView {
  id: string;
  name: string;
  packageId: string;
  createdAt: Date;
  disabled: boolean;
  /** The viewer's role in it; null for staff looking at it. */
  viewerRole: OrganisationRole | null;
}

export interface OrganisationKeyView {
  id: string;
  organisationId: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  allowedCidrs: string[];
  createdBy: string | null;
}

export interface CreatedOrganisationKey {
  key: OrganisationKeyView;
  /** The full token, shown once. */
  token: string;
}

export interface ConnectionView {
  keyId: string;
  keyName: string;
  keyPrefix: string;
  ip: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
  requestCount: number;
}

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

export const APPLICATIONS_DEFAULT_PAGE = 50;
export const APPLICATIONS_MAX_PAGE = 200;
export const maxKeysPerOrganisation = 100;
/** Each sends an email: an owner cannot turn svc into a mailer, nor an applicant flood the queue. */
export const invitationsPerHourPerOrganisation = 50;
export const applicationsPerDayPerAccount = 10;
const hourMs = 3_600_000;

interface Deps {
  identity: IdentityService;
  audit: AuditLog;
  mailer: Mailer;
  plans: PlanService;
  usage: UsageService;
  events: EnterpriseEvents;
  connections: ConnectionRecorder;
  throttle: Throttle;
  warn: (message: string) => (error: unknown) => void;
}

/** An organisation key's cached data: who it bills, and where it may be used from. */
interface KeyExtra {
  organisationId: string;
  keyId: string;
  allow: ((ip: string) => boolean) | null;
}

export class EnterpriseService {
  readonly events: EnterpriseEvents;
  readonly recorder: ConnectionRecorder;
  readonly #config: Config;
  readonly #db: Database;
  readonly #deps: Deps;

  constructor(config: Config, db: Database, deps: Deps) {
    this.#config = config;
    this.#db = db;
    this.#deps = deps;
    this.events = deps.events;
    this.recorder = deps.connections;
    deps.identity.registerResolver({
      prefix: tokenPrefixes.enterpriseKey,
      label: 'organisation key',
      resolve: (hash) => this.#resolveKey(hash),
      admit: (found, client) => this.#admitKey(found, client),
    });
  }

  // ——— Applications ———

  /** Submits an application for the caller (any signed-in person). Commercial ones are approved at once. */
  async submit(actor: authz.Actor, input: ApplicationInput): Promise<ApplicationView> {
    signedInPerson(actor);
    const clean = validateApplication(input);
    await this.#deps.throttle.enforce([{ key: `enterprise-apply:account:${actor.accountId}`, limit: applicationsPerDayPerAccount, periodMs: 24 * hourMs }], {
      en: 'applications',
      zh: '申请提交过于频繁',
    });
    const em = this.#db.orm.em.fork();
    const applicant = await em.findOneOrFail(Account, { id: actor.accountId });
    if (applicant.kind === 'organisation') throw new AppError('forbidden', bilingual('An organisation cannot apply for an organisation.', '组织不能申请组织。'));
    const open = await em.findOne(EnterpriseApplication, { accountId: actor.accountId, state: 'pending_review' });
    if (open) {
      throw new AppError('conflict', bilingual('You already have an application waiting for review ({id}); withdraw it before submitting another.', '您已有一份待审核的申请（{id}），请先撤回再提交新的申请。', { id: open.id }), {
        details: { applicationId: open.id },
      });
    }
    await this.#assertNameFree(em, clean.organisationKey, 'organisation');
    const commercial = clean.kind === 'commercial';
    let application: IEnterpriseApplication;
    try {
      application = await em.transactional(async (tx) => {
        const now = new Date();
        const row = tx.create(EnterpriseApplication, {
          id: randomUUID(),
          accountId: actor.accountId,
          ...clean,
          state: 'pending_review',
          autoApproved: false,
          organisationId: null,
          packageId: null,
          decidedBy: null,
          decidedAt: null,
          decisionNote: null,
        });
        // No ORM relations here: rows go in the order their foreign keys need.
        await tx.flush();
        this.#timeline(tx, row.id, 'submitted', 'applicant', actor.accountId, null, now);
        await tx.flush();
        if (commercial) {
          const packageId = this.#config.enterprise.defaultPackage;
          const organisationId = await this.#createOrganisation(tx, row, packageId);
          Object.assign(row, { state: 'approved', autoApproved: true, organisationId, packageId, decidedAt: new Date(), decisionNote: null });
          this.#timeline(tx, row.id, 'approved', 'system', null, 'Approved automatically: commercial applications need no review.', new Date(now.getTime() + 1));
          await tx.flush();
        }
        return row;
      });
    } catch (error) {
      throw uniqueToConflict(error);
    }
    return this.#announce(application, (locale, values) =>
      commercial ? applicationApprovedMail[locale]({ ...values, automatic: true }) : applicationSubmittedMail[locale](values),
    );
  }

  /** Withdraws the caller's own pending application. */
  async withdraw(actor: authz.Actor, applicationId: string): Promise<ApplicationView> {
    signedInPerson(actor);
    const em = this.#db.orm.em.fork();
    const row = await em.transactional(async (tx) => {
      const found = isUuid(applicationId) ? await tx.findOne(EnterpriseApplication, { id: applicationId, accountId: actor.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
      if (!found) throw applicationNotFound(applicationId);
      if (found.state !== 'pending_review') throw notPending(found);
      found.state = 'withdrawn';
      found.decidedAt = new Date();
      this.#timeline(tx, found.id, 'withdrawn', 'applicant', actor.accountId, null);
      await tx.flush();
      return found;
    });
    return this.#announce(row, (locale, values) => applicationWithdrawnMail[locale](values));
  }

  /** Staff: approves a pending application, creating its organisation (on `packageId` or the default package). Audited. */
  async approve(actor: authz.Actor, applicationId: string, options: { note?: string | null; packageId?: string | null; requestId?: string | null }): Promise<ApplicationView> {
    authz.assert(actor, 'application:review');
    const note = optionalReason(options.note, 'note');
    const packageId = options.packageId?.trim() || this.#config.enterprise.defaultPackage;
    if (!this.#deps.plans.findPackage(packageId)) {
      throw new AppError('invalid_request', bilingual('packageId: there is no plan package {id}.', 'packageId：没有 ID 为 {id} 的套餐。', { id: packageId }), { param: 'packageId' });
    }
    let row: IEnterpriseApplication;
    try {
      row = await this.#db.orm.em.fork().transactional(async (tx) => {
        const found = await this.#pendingForDecision(tx, applicationId);
        await this.#assertNameFree(tx, found.organisationKey, 'organisation');
        const organisationId = await this.#createOrganisation(tx, found, packageId);
        await this.#recordDecision(tx, found, actor, { state: 'approved', note, changes: { organisationId, packageId }, requestId: options.requestId ?? null });
        return found;
      });
    } catch (error) {
      throw uniqueToConflict(error);
    }
    return this.#announce(row, (locale, values) => applicationApprovedMail[locale]({ ...values, automatic: false }));
  }

  /** Staff: rejects a pending application with a reason the applicant is shown. Audited. */
  async reject(actor: authz.Actor, applicationId: string, options: { reason?: string | null; requestId?: string | null }): Promise<ApplicationView> {
    authz.assert(actor, 'application:review');
    const reason = checkReason(options.reason);
    const row = await this.#db.orm.em.fork().transactional(async (tx) => {
      const found = await this.#pendingForDecision(tx, applicationId);
      await this.#recordDecision(tx, found, actor, { state: 'rejected', note: reason, changes: {}, requestId: options.requestId ?? null });
      return found;
    });
    return this.#announce(row, (locale, values) => applicationRejectedMail[locale](values));
  }

  /** Staff: applications, optionally in one state; pending ones oldest first (the queue), others newest first. */
  async listApplications(actor: authz.Actor, query: { state?: ApplicationState | null; first?: number | null; after?: string | null }): Promise<ApplicationPage> {
    authz.assert(actor, 'application:review');
    const first = query.first ?? APPLICATIONS_DEFAULT_PAGE;
    if (!Number.isInteger(first) || first < 1 || first > APPLICATIONS_MAX_PAGE) {
      throw new AppError('invalid_request', bilingual('first must be an integer from 1 to {max}.', 'first 必须是 1 到 {max} 之间的整数。', { max: APPLICATIONS_MAX_PAGE }), { param: 'first' });
    }
    if (query.state && !applicationStates.includes(query.state)) throw new AppError('invalid_request', bilingual('state is not an application state.', 'state 不是有效的申请状态。'), { param: 'state' });
    const ascending = query.state === 'pending_review';
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.state) {
      where.push(`"state" = ?`);
      params.push(query.state);
    }
    if (query.after) {
      const cursor = decodeCursor(query.after);
      where.push(`("created_at", "id") ${ascending ? '>' : '<'} (timestamptz 'epoch' + ? * interval '1 microsecond', ?)`);
      params.push(cursor.createdUs, cursor.id);
    }
    params.push(first + 1);
    const rows = await this.#db.orm.em.getConnection().execute<(ApplicationRow & { created_us: string })[]>(
      `select *, (extract(epoch from "created_at") * 1000000)::bigint::text as "created_us" from "enterprise_application"
        ${where.length > 0 ? `where ${where.join(' and ')}` : ''}
        order by "created_at" ${ascending ? 'asc' : 'desc'}, "id" ${ascending ? 'asc' : 'desc'} limit ?`,
      params,
      'all',
    );
    const page = rows.slice(0, first);
    const last = page.at(-1);
    return { nodes: page.map(rowView), pageInfo: { hasNextPage: rows.length > first, endCursor: last ? encodeCursor(last.created_us, last.id) : null } };
  }

  /**
   * One application: staff see any (null when there is none); the applicant sees their own. Anyone else gets
   * 403 for every id, existing or not, so the answer tells them nothing.
   */
  async getApplication(actor: authz.Actor, applicationId: string): Promise<ApplicationView | null> {
    signedIn(actor);
    const row = isUuid(applicationId) ? await this.#db.orm.em.fork().findOne(EnterpriseApplication, { id: applicationId }) : null;
    if (row && row.accountId === actor.accountId) return applicationView(row);
    authz.assert(actor, 'application:review');
    return row ? applicationView(row) : null;
  }

  /** The caller's own applications, newest first. */
  async myApplications(actor: authz.Actor): Promise<ApplicationView[]> {
    signedIn(actor);
    const rows = await this.#db.orm.em.fork().find(EnterpriseApplication, { accountId: actor.accountId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 100 });
    return rows.map(applicationView);
  }

  /** Staff: the applicant's other applications (any state), newest first. */
  async otherApplications(actor: authz.Actor, application: ApplicationView): Promise<ApplicationView[]> {
    authz.assert(actor, 'application:review');
    const rows = await this.#db.orm.em.fork().find(EnterpriseApplication, { accountId: application.accountId, id: { $ne: application.id } }, { orderBy: { createdAt: 'desc' }, limit: 50 });
    return rows.map(applicationView);
  }

  /** The application's timeline, oldest first. Staff names are shown to staff only. */
  async timeline(actor: authz.Actor, application: ApplicationView): Promise<TimelineEntry[]> {
    signedIn(actor);
    const staffViewer = authz.can(actor, 'application:review');
    if (!staffViewer && application.accountId !== actor.accountId) return [];
    const rows = await this.#db.orm.em.getConnection().execute<{ id: string; created_at: Date; action: TimelineAction; actor_kind: ActorKind; actor_id: string | null; note: string | null; email: string | null }[]>(
      `select e."id", e."created_at", e."action", e."actor_kind", e."actor_id", e."note", a."email"
         from "enterprise_application_event" e left join "account" a on a."id" = e."actor_id"
        where e."application_id" = ? order by e."created_at", e."id"`,
      [application.id],
      'all',
    );
    return rows.map((row) => {
      const visible = staffViewer || row.actor_kind === 'applicant';
      return {
        id: row.id,
        at: new Date(row.created_at),
        action: row.action,
        actorKind: row.actor_kind,
        actorId: visible ? row.actor_id : null,
        actorEmail: visible ? row.email : null,
        note: row.note,
      };
    });
  }

  /** Whether the viewer may see this application change (staff: all; the applicant: their own). */
  canWatchApplication(actor: authz.Actor, accountId: string): boolean {
    if (!actor) return false;
    return actor.accountId === accountId || authz.can(actor, 'application:review');
  }

  /** The review queue for the staff dashboard: how many wait and the oldest of them. */
  async reviewQueueSummary(): Promise<{ pending: number; oldestSubmittedAt: Date | null; oldestApplicationId: string | null }> {
    const row = await this.#db.orm.em.getConnection().execute<{ pending: string | number; oldest_at: Date | null; oldest_id: string | null }>(
      `select (select count(*) from "enterprise_application" where "state" = 'pending_review') as "pending",
              o."created_at" as "oldest_at", o."id" as "oldest_id"
         from (select 1) one
         left join lateral (select "id", "created_at" from "enterprise_application" where "state" = 'pending_review' order by "created_at", "id" limit 1) o on true`,
      [],
      'get',
    );
    return { pending: Number(row?.pending ?? 0), oldestSubmittedAt: row?.oldest_at ? new Date(row.oldest_at) : null, oldestApplicationId: row?.oldest_id ?? null };
  }

  // ——— Organisations ———

  /** The organisations the caller belongs to (pending invitations to their verified email are taken up first). */
  async organisations(actor: authz.Actor): Promise<OrganisationView[]> {
    signedIn(actor);
    await this.#claimInvitations(actor.accountId);
    return this.#organisationsOfAccount(actor.accountId);
  }

  /** Staff: the organisations an account belongs to, with its role. */
  async organisationsOf(actor: authz.Actor, accountId: string): Promise<OrganisationView[]> {
    authz.assert(actor, 'account:read');
    return this.#organisationsOfAccount(accountId);
  }

  /** One organisation the caller belongs to (or any, for staff); null otherwise. */
  async organisation(actor: authz.Actor, organisationId: string): Promise<OrganisationView | null> {
    signedIn(actor);
    await this.#claimInvitations(actor.accountId);
    try {
      return (await this.#access(actor, organisationId, 'organisation:read')).organisation;
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return null;
      throw error;
    }
  }

  async keys(actor: authz.Actor, organisationId: string): Promise<OrganisationKeyView[]> {
    await this.#access(actor, organisationId, 'organisation:read');
    const rows = await this.#db.orm.em.fork().find(ApiKey, { accountId: organisationId, kind: 'enterprise', revokedAt: null }, { orderBy: { createdAt: 'desc', id: 'asc' } });
    return rows.map(keyView);
  }

  /** Mints an organisation key (owner and admins, from a web session). The token is returned this once. */
  async createKey(actor: authz.Actor, organisationId: string, input: { name: unknown; allowedCidrs?: readonly unknown[] | null }): Promise<CreatedOrganisationKey> {
    await this.#access(actor, organisationId, 'organisation:keys:create');
    const name = keyName(input.name);
    const allowedCidrs = parseCidrs(input.allowedCidrs);
    const em = this.#db.orm.em.fork();
    const live = await em.count(ApiKey, { accountId: organisationId, kind: 'enterprise', revokedAt: null });
    if (live >= maxKeysPerOrganisation) {
      throw new AppError('invalid_request', bilingual('An organisation can have at most {max} live keys; revoke one first.', '每个组织最多只能有 {max} 个有效密钥，请先撤销一个。', { max: maxKeysPerOrganisation }));
    }
    const { key, token } = mintKey(em, 'enterprise', { accountId: organisationId, name, allowedCidrs, createdBy: actor!.accountId });
    await em.flush();
    return { key: keyView(key), token };
  }

  /**
   * Revokes an organisation key; it stops working at once on every instance. The organisation's owner and
   * admins need no reason; staff who are not members (`api-key:revoke-any`) must give one, and are audited.
   */
  async revokeKey(actor: authz.Actor, keyId: string, organisationId?: string | null, options: { reason?: string | null; requestId?: string | null } = {}): Promise<OrganisationKeyView> {
    signedIn(actor);
    const em = this.#db.orm.em.fork();
    const key = isUuid(keyId) ? await em.findOne(ApiKey, { id: keyId, kind: 'enterprise', revokedAt: null }) : null;
    const missing = () => new AppError('not_found', bilingual('No live organisation key {id} in your organisations.', '您的组织中没有有效的组织密钥 {id}。', { id: keyId.slice(0, 64) }), { param: 'id' });
    if (!key || (organisationId && key.accountId !== organisationId)) throw missing();
    let byStaff = false;
    try {
      await this.#access(actor, key.accountId, 'organisation:keys:revoke');
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'not_found')) throw error;
      if (!authz.can(actor, 'api-key:revoke-any', { type: 'account', id: key.accountId, role: 'member' })) throw missing();
      byStaff = true;
    }
    if (!byStaff) {
      key.revokedAt = new Date();
      await em.flush();
    } else {
      const reason = checkReason(options.reason);
      await em.transactional(async (tx) => {
        const row = await tx.findOneOrFail(ApiKey, { id: key.id });
        row.revokedAt = new Date();
        key.revokedAt = row.revokedAt;
        await tx.flush();
        await this.#deps.audit.record(
          {
            actorId: actor.accountId,
            action: 'api-key:revoke-any',
            targetType: 'api_key',
            targetId: row.id,
            before: { accountId: row.accountId, kind: 'enterprise', name: row.name, prefix: row.prefix, last4: row.last4, revokedAt: null },
            after: { revokedAt: row.revokedAt.toISOString() },
            reason,
            requestId: options.requestId ?? null,
          },
          tx,
        );
      });
    }
    await this.#deps.identity.invalidate({ tokenHashes: [key.tokenHash] });
    return keyView(key);
  }

  /** Connecting IPs of the organisation's keys (revoked keys' too), most recently seen first. */
  async connections(actor: authz.Actor, organisationId: string, options: { keyId?: string | null } = {}): Promise<ConnectionView[]> {
    await this.#access(actor, organisationId, 'organisation:read');
    const params: unknown[] = [organisationId];
    let filter = '';
    if (options.keyId) {
      if (!isUuid(options.keyId)) return [];
      filter = 'and c."key_id" = ?';
      params.push(options.keyId);
    }
    const rows = await this.#db.orm.em.getConnection().execute<
      { key_id: string; name: string; prefix: string; ip: string; first_seen_at: Date; last_seen_at: Date; request_count: string | number }[]
    >(
      `select c."key_id", k."name", k."prefix", c."ip", c."first_seen_at", c."last_seen_at", c."request_count"
         from "organisation_connection" c join "api_key" k on k."id" = c."key_id"
        where c."organisation_id" = ? ${filter}
        order by c."last_seen_at" desc, c."ip" limit 1000`,
      params,
      'all',
    );
    return rows.map((row) => ({
      keyId: row.key_id,
      keyName: row.name,
      keyPrefix: row.prefix,
      ip: row.ip,
      firstSeenAt: new Date(row.first_seen_at),
      lastSeenAt: new Date(row.last_seen_at),
      requestCount: Number(row.request_count),
    }));
  }

  /** Checks the caller may watch an organisation's connections (for the subscription). */
  async assertCanRead(actor: authz.Actor, organisationId: string): Promise<void> {
    await this.#access(actor, organisationId, 'organisation:read');
  }

  async members(actor: authz.Actor, organisationId: string): Promise<MemberView[]> {
    await this.#access(actor, organisationId, 'organisation:read');
    const rows = await this.#db.orm.em.getConnection().execute<{ account_id: string; email: string; role: OrganisationRole; created_at: Date }[]>(
      `select m."account_id", a."email", m."role", m."created_at" from "organisation_member" m join "account" a on a."id" = m."account_id"
        where m."organisation_id" = ? order by case m."role" when 'owner' then 0 when 'admin' then 1 else 2 end, m."created_at", a."email"`,
      [organisationId],
      'all',
    );
    return rows.map((row) => ({ organisationId, accountId: row.account_id, email: row.email, role: row.role, joinedAt: new Date(row.created_at) }));
  }

  async invitations(actor: authz.Actor, organisationId: string): Promise<InvitationView[]> {
    await this.#access(actor, organisationId, 'organisation:read');
    const rows = await this.#db.orm.em.fork().find(OrganisationInvitation, { organisationId, acceptedAt: null }, { orderBy: { createdAt: 'desc' } });
    return rows.map((row) => ({ id: row.id, organisationId, email: row.email, role: row.role, invitedAt: row.createdAt }));
  }

  /**
   * Owner: adds the account with this (verified) email at once, or records an invitation that becomes a
   * membership when that email signs up and verifies it (an email-code sign-in).
   */
  async invite(actor: authz.Actor, organisationId: string, input: { email: unknown; role?: unknown }): Promise<InviteResult> {
    const { organisation } = await this.#access(actor, organisationId, 'organisation:members:manage');
    const email = typeof input.email === 'string' ? input.email.trim().toLowerCase() : '';
    if (!emailPattern.test(email) || email.length > 254) throw new AppError('invalid_request', bilingual('email must be an email address.', 'email 必须是有效的邮箱地址。'), { param: 'email' });
    const role = input.role ?? 'member';
    if (role !== 'admin' && role !== 'member') throw new AppError('invalid_request', bilingual('role must be admin or member (an organisation has one owner).', 'role 必须是 admin 或 member（一个组织只有一位所有者）。'), { param: 'role' });
    await this.#deps.throttle.enforce([{ key: `enterprise-invite:organisation:${organisationId}`, limit: invitationsPerHourPerOrganisation, periodMs: hourMs }], {
      en: 'invitations',
      zh: '邀请过于频繁',
    });
    const em = this.#db.orm.em.fork();
    const account = await em.findOne(Account, { email });
    // Only an account that proved it owns the address joins at once; any other waits for that proof
    // (a sign-in by email code), so registering someone's address with a password gains nothing.
    if (account && account.kind === 'person' && account.emailVerifiedAt) {
      const existing = await em.findOne(OrganisationMember, { organisationId, accountId: account.id });
      if (existing) throw new AppError('conflict', bilingual('{email} is already a member of this organisation.', '{email} 已是该组织的成员。', { email }), { param: 'email' });
      const member = em.create(OrganisationMember, { id: randomUUID(), organisationId, accountId: account.id, role });
      await em.flush();
      await this.#mail(account.id, (locale) => invitationMail[locale]({ organisation: organisation.name, role, url: this.#consoleUrl() }));
      return { member: { organisationId, accountId: account.id, email, role, joinedAt: member.createdAt }, invitation: null };
    }
    if (account && account.kind !== 'person') throw new AppError('invalid_request', bilingual('{email} cannot be invited.', '无法邀请 {email}。', { email }), { param: 'email' });
    const open = await em.findOne(OrganisationInvitation, { organisationId, email, acceptedAt: null });
    if (open) throw new AppError('conflict', bilingual('{email} is already invited to this organisation.', '{email} 已被邀请加入该组织。', { email }), { param: 'email' });
    const invitation = em.create(OrganisationInvitation, { id: randomUUID(), organisationId, email, role, invitedBy: actor!.accountId, acceptedAt: null });
    await em.flush();
    // No account, so no language of its own: the inviter's, who most likely shares one with the invitee.
    const locale = await this.#localeOf(actor!.accountId).catch(() => defaultLocale);
    await this.#mailer().send({ to: email, ...invitationMail[locale]({ organisation: organisation.name, role, url: this.#consoleUrl() }) }).catch(this.#deps.warn('invitation mail failed'));
    return { member: null, invitation: { id: invitation.id, organisationId, email, role, invitedAt: invitation.createdAt } };
  }

  /** Owner: changes a member's role. Making someone owner hands ownership over (the old owner becomes admin). */
  async setMemberRole(actor: authz.Actor, organisationId: string, accountId: string, role: OrganisationRole): Promise<MemberView> {
    await this.#access(actor, organisationId, 'organisation:members:manage');
    if (!['owner', 'admin', 'member'].includes(role)) throw new AppError('invalid_request', bilingual('role must be owner, admin or member.', 'role 必须是 owner、admin 或 member。'), { param: 'role' });
    await this.#db.orm.em.fork().transactional(async (tx) => {
      const member = isUuid(accountId) ? await tx.findOne(OrganisationMember, { organisationId, accountId }) : null;
      if (!member) throw memberNotFound(accountId);
      if (member.accountId === actor!.accountId && role !== 'owner') {
        throw new AppError('invalid_request', bilingual('The owner cannot step down directly: make another member owner instead.', '所有者不能直接降级：请把另一位成员设为所有者。'), { param: 'role' });
      }
      if (role === 'owner' && member.accountId !== actor!.accountId) {
        await tx.nativeUpdate(OrganisationMember, { organisationId, accountId: actor!.accountId }, { role: 'admin' });
      }
      member.role = role;
      await tx.flush();
    });
    const members = await this.members(actor, organisationId).catch(() => []);
    const updated = members.find((member) => member.accountId === accountId);
    if (!updated) throw memberNotFound(accountId);
    return updated;
  }

  /** Owner: removes a member (not themselves: an organisation keeps its owner). Pending invitations are removed by id too. */
  async removeMember(actor: authz.Actor, organisationId: string, accountId: string): Promise<boolean> {
    await this.#access(actor, organisationId, 'organisation:members:manage');
    if (accountId === actor!.accountId) throw new AppError('invalid_request', bilingual('The owner cannot be removed; hand ownership to another member first.', '不能移除所有者；请先把所有权交给另一位成员。'), { param: 'accountId' });
    const em = this.#db.orm.em.fork();
    if (!isUuid(accountId)) throw memberNotFound(accountId);
    const removed = await em.nativeDelete(OrganisationMember, { organisationId, accountId });
    if (removed > 0) return true;
    const invitation = await em.nativeDelete(OrganisationInvitation, { organisationId, id: accountId, acceptedAt: null });
    if (invitation > 0) return true;
    throw memberNotFound(accountId);
  }

  /** The organisation's pools now (as on /account/usage). */
  async usage(actor: authz.Actor, organisationId: string): Promise<UsageReport> {
    const { organisation } = await this.#access(actor, organisationId, 'organisation:read');
    return this.#deps.usage.report(organisationPayer(organisation));
  }

  /** The organisation's recent metered requests, newest first. */
  async usageHistory(actor: authz.Actor, organisationId: string, page: HistoryPageArgs): Promise<UsageHistoryPage> {
    const { organisation } = await this.#access(actor, organisationId, 'organisation:read');
    return this.#deps.usage.history(organisationPayer(organisation), page);
  }

  /** Flushes counted connections (tests and shutdown). */
  flushConnections(): Promise<void> {
    return this.recorder.flush();
  }

  // ——— internals ———

  /**
   * The organisation and the caller's membership, after checking `action`. Not a member (and not staff
   * reading): 404, so ids reveal nothing.
   */
  async #access(actor: authz.Actor, organisationId: string, action: OrganisationAction): Promise<{ organisation: OrganisationView; membership: OrganisationRole | null }> {
    if (!actor) authz.assert(actor, action, { type: 'organisation', id: organisationId, membership: null });
    const notFound = () =>
      new AppError('not_found', bilingual('No organisation {id} that you belong to.', '没有您所属的组织 {id}。', { id: String(organisationId).slice(0, 64) }), { param: 'organisationId' });
    if (!isUuid(organisationId)) throw notFound();
    const read = () =>
      this.#db.orm.em.getConnection().execute<OrganisationRow & { role: OrganisationRole | null }>(
        `select o."id", o."name", o."created_at", a."plan_package", a."disabled_at", m."role"
           from "organisation" o join "account" a on a."id" = o."id"
           left join "organisation_member" m on m."organisation_id" = o."id" and m."account_id" = ?
          where o."id" = ?`,
        [actor!.accountId, organisationId],
        'get',
      );
    let row = await read();
    if (!row) throw notFound();
    if (row.role === null && (await this.#claimInvitations(actor!.accountId)) > 0) row = (await read()) ?? row;
    if (row.role === null) {
      if (action === 'organisation:read' && authz.can(actor, 'account:read')) return { organisation: organisationView(row, null), membership: null };
      throw notFound();
    }
    authz.assert(actor, action, { type: 'organisation', id: organisationId, membership: row.role });
    return { organisation: organisationView(row, row.role), membership: row.role };
  }

  async #organisationsOfAccount(accountId: string): Promise<OrganisationView[]> {
    const rows = await this.#db.orm.em.getConnection().execute<(OrganisationRow & { role: OrganisationRole })[]>(
      `select o."id", o."name", o."created_at", a."plan_package", a."disabled_at", m."role"
         from "organisation_member" m join "organisation" o on o."id" = m."organisation_id" join "account" a on a."id" = o."id"
        where m."account_id" = ? order by o."name", o."id"`,
      [accountId],
      'all',
    );
    return rows.map((row) => organisationView(row, row.role));
  }

  /** Invitations to this account's verified email become memberships; returns how many. */
  async #claimInvitations(accountId: string): Promise<number> {
    const result = await this.#db.orm.em.getConnection().execute<{ affectedRows?: number }>(
      `with claimed as (
         update "organisation_invitation" i set "accepted_at" = now(), "updated_at" = now()
           from "account" a
          where a."id" = ? and a."email_verified_at" is not null and i."email" = a."email" and i."accepted_at" is null
          returning i."organisation_id", i."role", a."id" as "account_id")
       insert into "organisation_member" ("id", "created_at", "updated_at", "organisation_id", "account_id", "role")
       select gen_random_uuid(), now(), now(), "organisation_id", "account_id", "role" from claimed
       on conflict ("organisation_id", "account_id") do nothing`,
      [accountId],
      'run',
    );
    return result.affectedRows ?? 0;
  }

  async #pendingForDecision(tx: Em, applicationId: string): Promise<IEnterpriseApplication> {
    const found = isUuid(applicationId) ? await tx.findOne(EnterpriseApplication, { id: applicationId }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
    if (!found) throw applicationNotFound(applicationId);
    if (found.state !== 'pending_review') throw notPending(found);
    return found;
  }

  async #assertNameFree(em: Em, nameKey: string, param: string): Promise<void> {
    const taken = await em.findOne(Organisation, { nameKey });
    if (taken) throw new AppError('conflict', bilingual('An organisation with this name already exists on svc; choose another name.', 'svc 上已有同名组织，请换一个名称。'), { param });
  }

  /** The organisation's account (kind organisation), its row and its owner, inside `tx`. */
  async #createOrganisation(tx: Em, application: IEnterpriseApplication, packageId: string): Promise<string> {
    const id = randomUUID();
    tx.create(Account, {
      id,
      // Never signs in: no password, and an address in the reserved `.invalid` domain no mail reaches.
      email: `org-${id}@organisations.invalid`,
      displayName: application.organisation,
      role: 'member',
      planPackage: packageId,
      planPackageUntil: null,
      disabledAt: null,
      passwordHash: null,
      emailVerifiedAt: null,
      locale: null,
      kind: 'organisation',
    });
    await tx.flush();
    tx.create(Organisation, { id, name: application.organisation, nameKey: application.organisationKey, applicationId: application.id });
    await tx.flush();
    tx.create(OrganisationMember, { id: randomUUID(), organisationId: id, accountId: application.accountId, role: 'owner' });
    await tx.flush();
    return id;
  }

  #timeline(tx: Em, applicationId: string, action: TimelineAction, actorKind: ActorKind, actorId: string | null, note: string | null, at = new Date()): void {
    tx.create(EnterpriseApplicationEvent, { id: randomUUID(), createdAt: at, updatedAt: at, applicationId, action, actorKind, actorId, note });
  }

  /**
   * Staff's decision on a pending application, in `tx`: its new state (with `changes`), the timeline entry
   * and the audit record (before: pending_review; after: the state and `changes`; the note as its reason).
   */
  async #recordDecision(
    tx: Em,
    found: IEnterpriseApplication,
    actor: { accountId: string },
    decision: { state: 'approved' | 'rejected'; note: string | null; changes: { organisationId?: string; packageId?: string }; requestId: string | null },
  ): Promise<void> {
    const { state, note, changes } = decision;
    Object.assign(found, { state, ...changes, decidedBy: actor.accountId, decidedAt: new Date(), decisionNote: note });
    this.#timeline(tx, found.id, state, 'staff', actor.accountId, note);
    await tx.flush();
    await this.#deps.audit.record(
      {
        actorId: actor.accountId,
        action: state === 'approved' ? 'application:approve' : 'application:reject',
        targetType: 'application',
        targetId: found.id,
        before: { state: 'pending_review' },
        after: { state, ...changes },
        reason: note,
        requestId: decision.requestId,
      },
      tx,
    );
  }

  /** After an application changed (committed): tells the subscriptions, mails the applicant in their language, answers its view. */
  async #announce(application: IEnterpriseApplication, mail: (locale: Locale, values: { organisation: string; note: string | null; url: string }) => MailText): Promise<ApplicationView> {
    this.#publish(application);
    const view = applicationView(application);
    await this.#mail(application.accountId, (locale) => mail(locale, this.#mailValues(view)));
    return view;
  }

  #publish(application: IEnterpriseApplication): void {
    this.events.applicationChanged({ applicationId: application.id, accountId: application.accountId });
  }

  #mailer(): Mailer {
    return this.#deps.mailer;
  }

  #consoleUrl(): string {
    return `${this.#config.server.webUrl}/enterprise/console`;
  }

  #mailValues(view: ApplicationView): { organisation: string; note: string | null; url: string } {
    const url = view.state === 'approved' ? this.#consoleUrl() : `${this.#config.server.webUrl}/enterprise/apply`;
    return { organisation: view.organisation, note: view.decisionNote, url };
  }

  /** Mails an account in its language; a mail failure is logged, never undoes the decision. */
  async #mail(accountId: string, build: (locale: Locale) => MailText): Promise<void> {
    try {
      const account = await this.#db.orm.em.fork().findOne(Account, { id: accountId }, { fields: ['email', 'locale'] });
      if (!account) return;
      await this.#deps.mailer.send({ to: account.email, ...build(localeOf(account)) });
    } catch (error) {
      this.#deps.warn('enterprise mail failed')(error);
    }
  }

  /** An account's language (the default when it has none or is gone). */
  async #localeOf(accountId: string): Promise<Locale> {
    const account = await this.#db.orm.em.fork().findOne(Account, { id: accountId }, { fields: ['locale'] });
    return account ? localeOf(account) : defaultLocale;
  }

  async #resolveKey(hash: string): Promise<ResolvedCredential | null> {
    const row = await this.#db.orm.em.getConnection().execute<{
      id: string;
      last_used_at: Date | null;
      allowed_cidrs: string[] | string;
      account_id: string;
      email: string;
      plan_package: string;
      disabled_at: Date | null;
    }>(
      `select k."id", k."last_used_at", k."allowed_cidrs", a."id" as "account_id", a."email", a."plan_package", a."disabled_at"
         from "api_key" k join "account" a on a."id" = k."account_id"
        where k."token_hash" = ? and k."kind" = 'enterprise' and k."revoked_at" is null and a."kind" = 'organisation'`,
      [hash],
      'get',
    );
    if (!row) return null;
    const cidrs = typeof row.allowed_cidrs === 'string' ? (JSON.parse(row.allowed_cidrs) as string[]) : row.allowed_cidrs;
    const extra: KeyExtra = { organisationId: row.account_id, keyId: row.id, allow: allowListMatcher(cidrs ?? []) };
    return {
      principal: {
        accountId: row.account_id,
        email: row.email,
        role: 'member',
        payer: { kind: 'organisation', id: row.account_id, package: row.plan_package },
        credential: { kind: 'enterprise_key', id: row.id },
      },
      expiresAt: null,
      idleMs: null,
      lastUsedAt: row.last_used_at ? new Date(row.last_used_at).getTime() : 0,
      touch: { table: 'api_key', id: row.id },
      disabled: row.disabled_at !== null,
      extra,
    };
  }

  /** The allow-list check and the connecting-IP count, on every use of an organisation key. */
  #admitKey(found: ResolvedCredential, client: BearerClient | undefined): void {
    const extra = found.extra as KeyExtra;
    const ip = client ? normaliseIp(client.ip) : null;
    if (extra.allow && (ip === null || !extra.allow(ip))) {
      throw new AppError(
        'ip_not_allowed',
        bilingual(
          'This organisation key may not be used from {ip}: the address is outside its IP allow-list. Call from an allowed address, or ask an organisation admin to add it.',
          '该组织密钥不能从 {ip} 使用：此地址不在其 IP 允许列表内。请从允许的地址调用，或请组织管理员添加此地址。',
          { ip: ip ?? 'an unknown address' },
        ),
      );
    }
    if (ip !== null) this.recorder.record(extra.keyId, extra.organisationId, ip);
  }
}

interface ApplicationRow {
  id: string;
  created_at: Date;
  updated_at: Date;
  account_id: string;
  kind: ApplicationKind;
  organisation: string;
  contact_email: string;
  website: string | null;
  country: string;
  use_case: string;
  expected_monthly_tokens: string | number;
  state: ApplicationState;
  auto_approved: boolean;
  organisation_id: string | null;
  package_id: string | null;
  decided_at: Date | null;
  decision_note: string | null;
}

interface OrganisationRow {
  id: string;
  name: string;
  created_at: Date;
  plan_package: string;
  disabled_at: Date | null;
}

function organisationView(row: OrganisationRow, role: OrganisationRole | null): OrganisationView {
  return { id: row.id, name: row.name, packageId: row.plan_package, createdAt: new Date(row.created_at), disabled: row.disabled_at !== null, viewerRole: role };
}

function organisationPayer(organisation: OrganisationView): Payer {
  return { kind: 'organisation', id: organisation.id, package: organisation.packageId };
}

function applicationView(row: IEnterpriseApplication): ApplicationView {
  return {
    id: row.id,
    accountId: row.accountId,
    kind: row.kind,
    organisation: row.organisation,
    contactEmail: row.contactEmail,
    website: row.website ?? null,
    country: row.country,
    useCase: row.useCase,
    expectedMonthlyTokens: Number(row.expectedMonthlyTokens),
    state: row.state,
    autoApproved: row.autoApproved,
    organisationId: row.organisationId ?? null,
    packageId: row.packageId ?? null,
    submittedAt: row.createdAt,
    updatedAt: row.updatedAt,
    decidedAt: row.decidedAt ?? null,
    decisionNote: row.decisionNote ?? null,
  };
}

function rowView(row: ApplicationRow): ApplicationView {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    organisation: row.organisation,
    contactEmail: row.contact_email,
    website: row.website,
    country: row.country,
    useCase: row.use_case,
    expectedMonthlyTokens: Number(row.expected_monthly_tokens),
    state: row.state,
    autoApproved: row.auto_approved,
    organisationId: row.organisation_id,
    packageId: row.package_id,
    submittedAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    decidedAt: row.decided_at ? new Date(row.decided_at) : null,
    decisionNote: row.decision_note,
  };
}

function keyView(key: IApiKey): OrganisationKeyView {
  return {
    id: key.id,
    organisationId: key.accountId,
    name: key.name,
    prefix: key.prefix,
    last4: key.last4,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt ?? null,
    allowedCidrs: key.allowedCidrs ?? [],
    createdBy: key.createdBy ?? null,
  };
}

function signedIn(actor: authz.Actor): asserts actor is NonNullable<authz.Actor> {
  if (!actor) throw new AppError('sign_in_required', bilingual('Sign in required: no valid web session or bearer credential.', '请先登录：没有有效的网页会话或 Bearer 凭证。'));
}

/** Applications come from people signed in at the web app (not from keys). */
function signedInPerson(actor: authz.Actor): asserts actor is NonNullable<authz.Actor> {
  signedIn(actor);
  if (actor.credential.kind !== 'web_session') {
    throw new AppError(
      'sign_in_required',
      bilingual('This needs a web session: sign in at /enterprise/apply in a browser; a bearer credential alone is not accepted.', '此操作需要网页会话：请在浏览器中打开 /enterprise/apply 登录；仅凭 Bearer 凭证不能执行。'),
    );
  }
}

function applicationNotFound(id: string): AppError {
  return new AppError('not_found', bilingual('No application {id}.', '没有申请 {id}。', { id: String(id).slice(0, 64) }), { param: 'id' });
}

function memberNotFound(id: string): AppError {
  return new AppError('not_found', bilingual('No member or invitation {id} in this organisation.', '该组织中没有成员或邀请 {id}。', { id: String(id).slice(0, 64) }), { param: 'accountId' });
}

const stateWords: Record<ApplicationState, Bilingual> = {
  pending_review: { en: 'pending review', zh: '待审核' },
  approved: { en: 'approved', zh: '已批准' },
  rejected: { en: 'rejected', zh: '已拒绝' },
  withdrawn: { en: 'withdrawn', zh: '已撤回' },
};

function notPending(row: IEnterpriseApplication): AppError {
  return new AppError('conflict', bilingual('Application {id} is already {state}; only a pending application can change.', '申请 {id} 已是“{state}”状态，只有待审核的申请可以更改。', { id: row.id, state: stateWords[row.state] }), {
    details: { state: row.state },
  });
}

/** A unique index that refused a racing insert (open application, organisation name) as a 409. */
function uniqueToConflict(error: unknown): unknown {
  const text = error instanceof Error ? `${error.message} ${(error as { constraint?: string }).constraint ?? ''}` : '';
  if (text.includes('enterprise_application_open_account')) {
    return new AppError('conflict', bilingual('You already have an application waiting for review; withdraw it before submitting another.', '您已有一份待审核的申请，请先撤回再提交新的申请。'));
  }
  if (text.includes('enterprise_application_open_name')) {
    return new AppError('conflict', bilingual('An application for an organisation with this name is already waiting for review.', '已有同名组织的申请在等待审核。'), { param: 'organisation' });
  }
  if (text.includes('organisation_name_key_unique')) {
    return new AppError('conflict', bilingual('An organisation with this name already exists on svc; choose another name.', 'svc 上已有同名组织，请换一个名称。'), { param: 'organisation' });
  }
  return error;
}

function encodeCursor(createdUs: string, id: string): string {
  return Buffer.from(`application:${createdUs}:${id}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdUs: string; id: string } {
  const match = /^application:(\d{1,16}):([0-9a-f-]{36})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match || !isUuid(match[2]!)) throw new AppError('invalid_request', bilingual('after is not a cursor this API returned.', 'after 不是本接口返回的游标。'), { param: 'after' });
  return { createdUs: match[1]!, id: match[2]! };
}

// ——— Application validation ———

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

interface FieldError {
  param: string;
  message: string;
  messageZh: string;
}

/** The folded form of an organisation name that uniqueness is decided on. */
export function organisationKey(name: string): string {
  return name.normalize('NFKC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/**
 * Checks every field and reports them all: the error names the first bad field (`param`) and lists each
 * one in `fieldErrors` (param, message, messageZh), so a form can mark every field at once.
 */
export function validateApplication(input: ApplicationInput): {
  kind: ApplicationKind;
  organisation: string;
  organisationKey: string;
  contactEmail: string;
  website: string | null;
  country: string;
  useCase: string;
  expectedMonthlyTokens: number;
} {
  const errors: FieldError[] = [];
  const fail = (param: string, message: Bilingual) => errors.push({ param, message: message.en, messageZh: message.zh });
  const text = (value: unknown) => (typeof value === 'string' ? value.normalize('NFC').trim() : '');
  const controls = (value: string) => /[\p{Cc}\p{Cf}]/u.test(value.replace(/[\n\r\t]/g, ''));

  const kind = input.kind;
  if (!applicationKinds.includes(kind as ApplicationKind)) fail('kind', bilingual('kind must be commercial or enterprise.', 'kind 必须是 commercial 或 enterprise。'));

  const organisation = text(input.organisation).replace(/\s+/g, ' ');
  if (organisation.length < 2 || organisation.length > 200) fail('organisation', bilingual('organisation: give the organisation\'s name, 2 to 200 characters.', 'organisation：请填写组织名称，2 到 200 个字符。'));
  else if (controls(organisation)) fail('organisation', bilingual('organisation must not contain control characters.', 'organisation 不能包含控制字符。'));

  const contactEmail = text(input.contactEmail).toLowerCase();
  if (!emailPattern.test(contactEmail) || contactEmail.length > 254) fail('contactEmail', bilingual('contactEmail must be an email address, such as ops@example.com.', 'contactEmail 必须是邮箱地址，例如 ops@example.com。'));

  let website: string | null = text(input.website) || null;
  if (website !== null) {
    if (!/^https?:\/\//i.test(website)) website = `https://${website}`;
    let ok = website.length <= 500;
    try {
      const url = new URL(website);
      ok &&= (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.includes('.');
    } catch {
      ok = false;
    }
    if (!ok) fail('website', bilingual('website must be a web address, such as https://example.com (or leave it empty).', 'website 必须是网址，例如 https://example.com（也可以留空）。'));
  }

  const country = text(input.country).toUpperCase();
  if (!/^[A-Z]{2}$/.test(country) || regionNames.of(country) === country) {
    fail('country', bilingual('country must be a two-letter ISO 3166 country code, such as CN, US or DE.', 'country 必须是两位 ISO 3166 国家代码，例如 CN、US 或 DE。'));
  }

  const useCase = text(input.useCase);
  if (useCase.length < 10 || useCase.length > 5000) fail('useCase', bilingual('useCase: describe what you will use svc for, 10 to 5000 characters.', 'useCase：请描述您将如何使用 svc，10 到 5000 个字符。'));
  else if (controls(useCase)) fail('useCase', bilingual('useCase must not contain control characters.', 'useCase 不能包含控制字符。'));

  const raw = input.expectedMonthlyTokens;
  const tokens = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (typeof tokens !== 'number' || !Number.isSafeInteger(tokens) || tokens < 1 || tokens > 1e15) {
    fail('expectedMonthlyTokens', bilingual('expectedMonthlyTokens must be a whole number of tokens per month, from 1 to 10^15.', 'expectedMonthlyTokens 必须是每月的 token 数（整数），范围 1 到 10^15。'));
  }

  if (errors.length > 0) {
    const first = errors[0]!;
    const more = errors.length - 1;
    const message =
      more === 0 ? { en: first.message, zh: first.messageZh } : bilingual('{first} ({more} more fields need fixing.)', '{first}（另有 {more} 个字段需要修改。）', { first: { en: first.message, zh: first.messageZh }, more });
    throw new AppError('invalid_request', message, { param: first.param, stage: 'validation', details: { fieldErrors: errors } });
  }
  return {
    kind: kind as ApplicationKind,
    organisation,
    organisationKey: organisationKey(organisation),
    contactEmail,
    website,
    country,
    useCase,
    expectedMonthlyTokens: tokens as number,
  };
}

function localeOf(account: { locale?: string | null }): Locale {
  return isLocale(account.locale) ? account.locale : defaultLocale;
}
