/**
 * Enterprise applications (DESIGN §8.1), the applicant's side: submit, withdraw, read. States
 * `pending_review → approved | rejected`, and `withdrawn` by the applicant while pending. A commercial
 * application is approved on submit, its organisation created at once on Free; an enterprise one waits for
 * staff (application-review.service.ts). Every change goes on the timeline and is announced
 * (application.timeline.ts).
 *
 * Applications come from people signed in at the web app; they see their own, staff see all, anyone else
 * gets 403.
 */
import { LockMode } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import * as authz from '../../authz/authz.ts';
import type { Config } from '../../config/config.ts';
import type { Database, Em } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { Account } from '../account/account.entity.ts';
import type { Throttle } from '../../rate-limit/throttle.ts';
import type { ApplicationTimeline, TimelineEntry } from './application.timeline.ts';
import { applicationView, type ApplicationView } from './application.view.ts';
import { EnterpriseApplication, type IEnterpriseApplication } from './enterprise.entity.ts';
import { applicationNotFound, notPending, signedIn, signedInPerson, uniqueToConflict } from './enterprise.errors.ts';
import type { ApplicationChanged } from './enterprise.events.ts';
import { validateApplication, type ApplicationInput } from './enterprise.input.ts';
import { applicationApprovedMail, applicationSubmittedMail, applicationWithdrawnMail } from './enterprise.mail.ts';
import type { Organisations } from './organisation.service.ts';
import { claimOwnership } from './ownership.ts';

/** Each sends an email: an applicant cannot flood the queue. */
export const applicationsPerDayPerAccount = 10;
const dayMs = 86_400_000;

interface Deps {
  organisations: Organisations;
  throttle: Throttle;
  timeline: ApplicationTimeline;
}

export class EnterpriseApplications {
  readonly #config: Config;
  readonly #db: Database;
  readonly #deps: Deps;

  constructor(config: Config, db: Database, deps: Deps) {
    this.#config = config;
    this.#db = db;
    this.#deps = deps;
  }

  /**
   * Submits an application for the caller (any signed-in person). Commercial ones are approved at once, on
   * Free: the organisation upgrades through checkout like a member. Refused (409) to an account that owns
   * `enterprise.maxOwnedOrganisations` already.
   */
  async submit(actor: authz.Actor, input: ApplicationInput): Promise<ApplicationView> {
    signedInPerson(actor);
    const clean = validateApplication(input);
    await this.#deps.throttle.enforce([{ key: `enterprise-apply:account:${actor.accountId}`, limit: applicationsPerDayPerAccount, periodMs: dayMs }], {
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
    await this.#deps.organisations.assertNameFree(em, clean.organisationKey, 'organisation');
    const commercial = clean.kind === 'commercial';
    let application: IEnterpriseApplication;
    try {
      application = await em.transactional(async (tx) => {
        await claimOwnership(tx, actor.accountId, this.#config.enterprise.maxOwnedOrganisations);
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
        this.#deps.timeline.append(tx, row.id, { action: 'submitted', actorKind: 'applicant', actorId: actor.accountId, note: null, at: now });
        await tx.flush();
        if (commercial) await this.#approveAutomatically(tx, row, new Date(now.getTime() + 1));
        return row;
      });
    } catch (error) {
      throw uniqueToConflict(error);
    }
    return this.#deps.timeline.announce(application, (locale, values) =>
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
      this.#deps.timeline.append(tx, found.id, { action: 'withdrawn', actorKind: 'applicant', actorId: actor.accountId, note: null });
      await tx.flush();
      return found;
    });
    return this.#deps.timeline.announce(row, (locale, values) => applicationWithdrawnMail[locale](values));
  }

  /**
   * One application: staff see any (null when there is none); the applicant sees their own. Anyone else gets
   * 403 for every id, existing or not, so the answer tells them nothing.
   */
  async get(actor: authz.Actor, applicationId: string): Promise<ApplicationView | null> {
    signedIn(actor);
    const row = isUuid(applicationId) ? await this.#db.orm.em.fork().findOne(EnterpriseApplication, { id: applicationId }) : null;
    if (row && row.accountId === actor.accountId) return applicationView(row);
    authz.assert(actor, 'application:review');
    return row ? applicationView(row) : null;
  }

  /** The caller's own applications, newest first. */
  async mine(actor: authz.Actor): Promise<ApplicationView[]> {
    signedIn(actor);
    const rows = await this.#db.orm.em.fork().find(EnterpriseApplication, { accountId: actor.accountId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: 100 });
    return rows.map(applicationView);
  }

  /** The application's timeline, oldest first. Staff names are shown to staff only. */
  timeline(actor: authz.Actor, application: ApplicationView): Promise<TimelineEntry[]> {
    return this.#deps.timeline.entries(actor, application);
  }

  /** The timelines of a page of applications, in their order, in one query. */
  async timelines(actor: authz.Actor, applications: readonly ApplicationView[]): Promise<TimelineEntry[][]> {
    const byId = await this.#deps.timeline.entriesOf(actor, applications);
    return applications.map((application) => byId.get(application.id) ?? []);
  }

  /** Application changes on any instance that the viewer may see (staff: all; the applicant: their own). */
  changes(actor: authz.Actor): AsyncIterableIterator<ApplicationChanged> {
    return this.#deps.timeline.changes(actor);
  }

  /** A commercial application, in its submit's `tx`: approved by svc itself, its organisation on Free. */
  async #approveAutomatically(tx: Em, row: IEnterpriseApplication, at: Date): Promise<void> {
    const packageId = this.#config.plans.free.packages[0]!.id;
    const placement = { packageId, actorId: null, reason: `Application ${row.id} approved automatically.`, requestId: null };
    const { organisationId } = await this.#deps.organisations.create(tx, row, placement);
    Object.assign(row, { state: 'approved', autoApproved: true, organisationId, packageId, decidedAt: new Date(), decisionNote: null });
    this.#deps.timeline.append(tx, row.id, { action: 'approved', actorKind: 'system', actorId: null, note: 'Approved automatically: commercial applications need no review.', at });
    await tx.flush();
  }
}
