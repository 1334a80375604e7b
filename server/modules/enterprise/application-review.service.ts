/**
 * Staff's side of enterprise applications (DESIGN §8.1, `application:review`): the queue, and the decision
 * on a pending application — approved onto a package, its organisation created in the same transaction,
 * or rejected with a reason the applicant is shown. Each decision is audited and appended to the
 * timeline; staff never decide on an application they submitted (that attempt is refused and audited).
 */
import { LockMode } from '@mikro-orm/core';
import * as authz from '../../authz/authz.ts';
import type { Config } from '../../config/config.ts';
import type { Database, Em } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { AuditLog } from '../audit/audit.service.ts';
import { checkReason, optionalReason } from '../audit/reason.ts';
import { assertAudited } from '../audit/self-decision.ts';
import type { Principal } from '../../authz/principal.ts';
import type { PlanAssignments } from '../plan/plan-assignment.service.ts';
import type { PlanService } from '../plan/plan.service.ts';
import type { ReviewQueueSource, ReviewQueueSummary } from '../staff/stats.service.ts';
import type { ApplicationTimeline } from './application.timeline.ts';
import { applicationView, decodeCursor, encodeCursor, rowView, type ApplicationPage, type ApplicationRow, type ApplicationView } from './application.view.ts';
import { EnterpriseApplication, applicationStates, type ApplicationState, type IEnterpriseApplication } from './enterprise.entity.ts';
import { applicationNotFound, notPending, uniqueToConflict } from './enterprise.errors.ts';
import { applicationApprovedMail, applicationRejectedMail } from './enterprise.mail.ts';
import type { Organisations } from './organisation.service.ts';
import { claimOwnership } from './ownership.ts';

export const APPLICATIONS_DEFAULT_PAGE = 50;
export const APPLICATIONS_MAX_PAGE = 200;

interface Deps {
  organisations: Organisations;
  planAssignments: PlanAssignments;
  plans: PlanService;
  audit: AuditLog;
  timeline: ApplicationTimeline;
  warn: (message: string) => (error: unknown) => void;
}

interface Decision {
  state: 'approved' | 'rejected';
  note: string | null;
  changes: { organisationId?: string; packageId?: string };
  requestId: string | null;
}

export class ApplicationReviews implements ReviewQueueSource {
  readonly #config: Config;
  readonly #db: Database;
  readonly #deps: Deps;

  constructor(config: Config, db: Database, deps: Deps) {
    this.#config = config;
    this.#db = db;
    this.#deps = deps;
  }

  /** Applications, optionally in one state; pending ones oldest first (the queue), others newest first. */
  async list(actor: authz.Actor, query: { state?: ApplicationState | null; first?: number | null; after?: string | null }): Promise<ApplicationPage> {
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

  /** The applicant's other applications (any state), newest first. */
  async others(actor: authz.Actor, application: ApplicationView): Promise<ApplicationView[]> {
    authz.assert(actor, 'application:review');
    const rows = await this.#db.orm.em.fork().find(EnterpriseApplication, { accountId: application.accountId, id: { $ne: application.id } }, { orderBy: { createdAt: 'desc' }, limit: 50 });
    return rows.map(applicationView);
  }

  /** The review queue for the staff dashboard: how many wait and the oldest of them. */
  async reviewQueueSummary(): Promise<ReviewQueueSummary> {
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

  /**
   * Approves a pending application, creating its organisation (on `packageId` or the default package),
   * unless the applicant owns the most organisations one may. Audited; never their own.
   */
  async approve(actor: authz.Actor, applicationId: string, options: { note?: string | null; packageId?: string | null; requestId?: string | null }): Promise<ApplicationView> {
    const { staff, applicantId } = await this.#decidable(actor, applicationId, 'application:approve', options.requestId);
    const note = optionalReason(options.note, 'note');
    const packageId = options.packageId?.trim() || this.#config.enterprise.defaultPackage;
    if (!this.#deps.plans.findPackage(packageId)) {
      throw new AppError('invalid_request', bilingual('packageId: there is no plan package {id}.', 'packageId：没有 ID 为 {id} 的套餐。', { id: packageId }), { param: 'packageId' });
    }
    const requestId = options.requestId ?? null;
    let approved: { row: IEnterpriseApplication; packageChanged: boolean };
    try {
      approved = await this.#db.orm.em.fork().transactional(async (tx) => {
        // The applicant's row first, then the application: the order submit takes them in.
        await claimOwnership(tx, applicantId, this.#config.enterprise.maxOwnedOrganisations);
        const found = await this.#pendingForDecision(tx, applicationId);
        await this.#deps.organisations.assertNameFree(tx, found.organisationKey, 'organisation');
        const placement = { packageId, actorId: staff.accountId, reason: note, requestId };
        const { organisationId, packageChanged } = await this.#deps.organisations.create(tx, found, placement);
        await this.#recordDecision(tx, found, staff, { state: 'approved', note, changes: { organisationId, packageId }, requestId });
        return { row: found, packageChanged };
      });
    } catch (error) {
      throw uniqueToConflict(error);
    }
    // A brand-new account has nothing cached anywhere: an announcement that fails costs nothing.
    if (approved.packageChanged) await this.#deps.planAssignments.announce([approved.row.organisationId!]).catch(this.#deps.warn('organisation package announcement failed'));
    return this.#deps.timeline.announce(approved.row, (locale, values) => applicationApprovedMail[locale]({ ...values, automatic: false }));
  }

  /** Rejects a pending application with a reason the applicant is shown. Audited; never their own. */
  async reject(actor: authz.Actor, applicationId: string, options: { reason?: string | null; requestId?: string | null }): Promise<ApplicationView> {
    const { staff } = await this.#decidable(actor, applicationId, 'application:reject', options.requestId);
    const reason = checkReason(options.reason);
    const row = await this.#db.orm.em.fork().transactional(async (tx) => {
      const found = await this.#pendingForDecision(tx, applicationId);
      await this.#recordDecision(tx, found, staff, { state: 'rejected', note: reason, changes: {}, requestId: options.requestId ?? null });
      return found;
    });
    return this.#deps.timeline.announce(row, (locale, values) => applicationRejectedMail[locale](values));
  }

  /**
   * Before a decision: the caller reviews (`application:review`) and did not submit it (that attempt is
   * audited as `<attempt>:denied`). Returns the reviewer and the applicant.
   */
  async #decidable(actor: authz.Actor, applicationId: string, attempt: 'application:approve' | 'application:reject', requestId: string | null | undefined): Promise<{ staff: Principal; applicantId: string }> {
    authz.assert(actor, 'application:review');
    const found = isUuid(applicationId) ? await this.#db.orm.em.fork().findOne(EnterpriseApplication, { id: applicationId }, { fields: ['accountId'] }) : null;
    if (!found) throw applicationNotFound(applicationId);
    const target = { action: attempt, targetType: 'application' as const, targetId: found.id, requestId };
    const staff = await assertAudited(this.#deps.audit, target, actor, 'application:review', { type: 'application', id: found.id, applicantId: found.accountId });
    return { staff, applicantId: found.accountId };
  }

  async #pendingForDecision(tx: Em, applicationId: string): Promise<IEnterpriseApplication> {
    const found = isUuid(applicationId) ? await tx.findOne(EnterpriseApplication, { id: applicationId }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
    if (!found) throw applicationNotFound(applicationId);
    if (found.state !== 'pending_review') throw notPending(found);
    return found;
  }

  /**
   * The decision on a pending application, in `tx`: its new state (with `changes`), the timeline entry and
   * the audit record (before: pending_review; after: the state and `changes`; the note as its reason).
   */
  async #recordDecision(tx: Em, found: IEnterpriseApplication, actor: { accountId: string }, decision: Decision): Promise<void> {
    const { state, note, changes } = decision;
    Object.assign(found, { state, ...changes, decidedBy: actor.accountId, decidedAt: new Date(), decisionNote: note });
    this.#deps.timeline.append(tx, found.id, { action: state, actorKind: 'staff', actorId: actor.accountId, note });
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
}
