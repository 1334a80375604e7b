/**
 * Organisations (DESIGN §8.1): accounts of kind `organisation`, so metering, the ledger and live usage work
 * unchanged. Made by an approved application (`create`, inside the approval's transaction); read by their
 * members and by staff; their usage as the console shows it.
 *
 * `access` is the one check of who may do what to an organisation, by their role in it
 * (`organisation:read`, `organisation:keys:create`, …): members, keys and connecting IPs ask it too.
 * Someone who is not a member gets 404 for it, whatever the id — its existence is not theirs to learn.
 * Invitations to a member's verified email are taken up whenever they ask.
 */
import { randomUUID } from 'node:crypto';
import * as authz from '../../authz/authz.ts';
import type { OrganisationAction, OrganisationRole } from '../../authz/actions.ts';
import type { Config } from '../../config/config.ts';
import type { Database, Em } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError } from '../../errors/app-error.ts';
import { Account } from '../account/account.entity.ts';
import type { Payer } from '../../authz/principal.ts';
import type { PlanAssignments } from '../plan/plan-assignment.service.ts';
import type { HistoryPageArgs, UsageHistoryPage } from '../usage/usage.history.ts';
import type { UsageReport, UsageService } from '../usage/usage.service.ts';
import { Organisation, OrganisationMember, type IEnterpriseApplication } from './enterprise.entity.ts';
import { organisationNameTaken, organisationNotFound, signedIn } from './enterprise.errors.ts';

export interface OrganisationView {
  id: string;
  name: string;
  packageId: string;
  createdAt: Date;
  disabled: boolean;
  /** The viewer's role in it; null for staff looking at it. */
  viewerRole: OrganisationRole | null;
}

/** What `access` answers: the organisation, and the caller's role in it (null for staff reading). */
export interface OrganisationAccess {
  organisation: OrganisationView;
  membership: OrganisationRole | null;
}

/** The package an approval puts a new organisation on, and who decided it (audited as a package change). */
export interface Placement {
  packageId: string;
  /** The staff member who approved; null when svc approved it (commercial applications, on Free). */
  actorId: string | null;
  /** The staff's note, shown as written in the audit log; null when there is none. */
  reason: string | null;
  requestId: string | null;
}

interface OrganisationRow {
  id: string;
  name: string;
  created_at: Date;
  plan_package: string;
  disabled_at: Date | null;
}

interface Deps {
  planAssignments: PlanAssignments;
  usage: UsageService;
}

export class Organisations {
  readonly #db: Database;
  readonly #deps: Deps;
  readonly #freePackage: string;

  constructor(config: Config, db: Database, deps: Deps) {
    this.#db = db;
    this.#deps = deps;
    this.#freePackage = config.plans.free.packages[0]!.id;
  }

  /** The organisations the caller belongs to (pending invitations to their verified email are taken up first). */
  async list(actor: authz.Actor): Promise<OrganisationView[]> {
    signedIn(actor);
    await this.claimInvitations(actor.accountId);
    return this.#ofAccount(actor.accountId);
  }

  /** Staff: the organisations an account belongs to, with its role. */
  async ofAccount(actor: authz.Actor, accountId: string): Promise<OrganisationView[]> {
    authz.assert(actor, 'account:read');
    return this.#ofAccount(accountId);
  }

  /** One organisation the caller belongs to (or any, for staff); null otherwise. */
  async get(actor: authz.Actor, organisationId: string): Promise<OrganisationView | null> {
    signedIn(actor);
    await this.claimInvitations(actor.accountId);
    try {
      return (await this.access(actor, organisationId, 'organisation:read')).organisation;
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return null;
      throw error;
    }
  }

  /** Checks the caller may watch the organisation (its connecting IPs, its usage). */
  async assertCanRead(actor: authz.Actor, organisationId: string): Promise<void> {
    await this.access(actor, organisationId, 'organisation:read');
  }

  /**
   * The organisation's pools now (as on /account/usage). With a subscription's wake-up generation, the
   * report is shared with the organisation's other subscriptions woken with it; the access check is each
   * caller's own.
   */
  async usage(actor: authz.Actor, organisationId: string, generation?: number): Promise<UsageReport> {
    const { organisation } = await this.access(actor, organisationId, 'organisation:read');
    return this.#deps.usage.reportFor(organisationPayer(organisation), generation);
  }

  /** The organisation's recent metered requests, newest first. */
  async usageHistory(actor: authz.Actor, organisationId: string, page: HistoryPageArgs): Promise<UsageHistoryPage> {
    const { organisation } = await this.access(actor, organisationId, 'organisation:read');
    return this.#deps.usage.history(organisationPayer(organisation), page);
  }

  /**
   * The organisation and the caller's membership, after checking `action`. Not a member (and not staff
   * reading): 404, so ids reveal nothing.
   */
  async access(actor: authz.Actor, organisationId: string, action: OrganisationAction): Promise<OrganisationAccess> {
    if (!actor) authz.assert(actor, action, { type: 'organisation', id: organisationId, membership: null });
    if (!isUuid(organisationId)) throw organisationNotFound(organisationId);
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
    if (!row) throw organisationNotFound(organisationId);
    if (row.role === null && (await this.claimInvitations(actor!.accountId)) > 0) row = (await read()) ?? row;
    if (row.role === null) {
      if (action === 'organisation:read' && authz.can(actor, 'account:read')) return { organisation: organisationView(row, null), membership: null };
      throw organisationNotFound(organisationId);
    }
    authz.assert(actor, action, { type: 'organisation', id: organisationId, membership: row.role });
    return { organisation: organisationView(row, row.role), membership: row.role };
  }

  /** Invitations to this account's verified email become memberships; returns how many. */
  async claimInvitations(accountId: string): Promise<number> {
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

  /** Refuses (409 on `param`) a name another organisation has, folded as `organisationKey` folds it. */
  async assertNameFree(em: Em, nameKey: string, param: string): Promise<void> {
    const taken = await em.findOne(Organisation, { nameKey });
    if (taken) throw organisationNameTaken(param);
  }

  /**
   * Makes the organisation of an approved application inside `tx`: its account (kind organisation, born on
   * Free like every account), its row, and the applicant as owner; then puts it on the placement's package
   * through the plan assignments (audited when that is not Free). Returns its id, and whether its package
   * changed: then the caller announces it after `tx` commits (`PlanAssignments.announce`).
   */
  async create(tx: Em, application: IEnterpriseApplication, placement: Placement): Promise<{ organisationId: string; packageChanged: boolean }> {
    const id = randomUUID();
    tx.create(Account, {
      id,
      // Never signs in: no password, and an address in the reserved `.invalid` domain no mail reaches.
      email: `org-${id}@organisations.invalid`,
      displayName: application.organisation,
      role: 'member',
      planPackage: this.#freePackage,
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
    const packageChanged = await this.#deps.planAssignments.assignWithin(tx, id, { ...placement, until: null });
    return { organisationId: id, packageChanged };
  }

  async #ofAccount(accountId: string): Promise<OrganisationView[]> {
    const rows = await this.#db.orm.em.getConnection().execute<(OrganisationRow & { role: OrganisationRole })[]>(
      `select o."id", o."name", o."created_at", a."plan_package", a."disabled_at", m."role"
         from "organisation_member" m join "organisation" o on o."id" = m."organisation_id" join "account" a on a."id" = o."id"
        where m."account_id" = ? order by o."name", o."id"`,
      [accountId],
      'all',
    );
    return rows.map((row) => organisationView(row, row.role));
  }
}

function organisationView(row: OrganisationRow, role: OrganisationRole | null): OrganisationView {
  return { id: row.id, name: row.name, packageId: row.plan_package, createdAt: new Date(row.created_at), disabled: row.disabled_at !== null, viewerRole: role };
}

function organisationPayer(organisation: OrganisationView): Payer {
  return { kind: 'organisation', id: organisation.id, package: organisation.packageId };
}
