/**
 * What happened to an application, and who hears of it (DESIGN §8.1): every change appends an entry (who,
 * when, the note) inside the transaction of the change; once committed, `announce` tells the
 * `enterpriseApplicationChanged` watchers on every instance and mails the applicant in their language.
 * Staff's names are shown to staff only.
 */
import { randomUUID } from 'node:crypto';
import * as authz from '../../authz/authz.ts';
import type { Database, Em } from '../../db/orm.ts';
import type { Locale } from '../../i18n/locale.ts';
import type { MailText } from '../account/account.mail.ts';
import { applicationView, type ApplicationView } from './application.view.ts';
import { EnterpriseApplicationEvent, type ActorKind, type IEnterpriseApplication, type TimelineAction } from './enterprise.entity.ts';
import { signedIn } from './enterprise.errors.ts';
import type { ApplicationChanged, EnterpriseEvents } from './enterprise.events.ts';
import type { EnterpriseMailer } from './enterprise.mailer.ts';

/** The mail a change sends the applicant, in their language. */
export type ApplicationMail = (locale: Locale, values: { organisation: string; note: string | null; url: string }) => MailText;

export interface TimelineEntry {
  id: string;
  at: Date;
  action: TimelineAction;
  actorKind: ActorKind;
  actorId: string | null;
  actorEmail: string | null;
  note: string | null;
}

interface EntryRow {
  application_id: string;
  id: string;
  created_at: Date;
  action: TimelineAction;
  actor_kind: ActorKind;
  actor_id: string | null;
  note: string | null;
  email: string | null;
}

export class ApplicationTimeline {
  readonly #db: Database;
  readonly #events: EnterpriseEvents;
  readonly #mail: EnterpriseMailer;

  constructor(db: Database, deps: { events: EnterpriseEvents; mail: EnterpriseMailer }) {
    this.#db = db;
    this.#events = deps.events;
    this.#mail = deps.mail;
  }

  /** Appends an entry in `tx` (the caller flushes). */
  append(tx: Em, applicationId: string, entry: { action: TimelineAction; actorKind: ActorKind; actorId: string | null; note: string | null; at?: Date }): void {
    const at = entry.at ?? new Date();
    tx.create(EnterpriseApplicationEvent, { id: randomUUID(), createdAt: at, updatedAt: at, applicationId, action: entry.action, actorKind: entry.actorKind, actorId: entry.actorId, note: entry.note });
  }

  /** After an application changed (committed): tells the watchers, mails the applicant, answers its view. */
  async announce(application: IEnterpriseApplication, mail: ApplicationMail): Promise<ApplicationView> {
    this.#events.applicationChanged({ applicationId: application.id, accountId: application.accountId });
    const view = applicationView(application);
    const url = view.state === 'approved' ? this.#mail.consoleUrl : this.#mail.applyUrl;
    await this.#mail.toAccount(application.accountId, (locale) => mail(locale, { organisation: view.organisation, note: view.decisionNote, url }));
    return view;
  }

  /** Application changes on any instance that the viewer may see (staff: all; the applicant: their own). */
  changes(actor: authz.Actor): AsyncIterableIterator<ApplicationChanged> {
    return this.#events.applications((event) => !!actor && (actor.accountId === event.accountId || authz.can(actor, 'application:review')));
  }

  /** The application's timeline, oldest first: for staff, and for its applicant (anyone else sees none). */
  async entries(actor: authz.Actor, application: { id: string; accountId: string }): Promise<TimelineEntry[]> {
    return (await this.entriesOf(actor, [application])).get(application.id) ?? [];
  }

  /**
   * The timelines of several applications (a page of the review queue) in one query, by application id:
   * staff see every one, an applicant their own (anyone else's is left out).
   */
  async entriesOf(actor: authz.Actor, applications: readonly { id: string; accountId: string }[]): Promise<Map<string, TimelineEntry[]>> {
    signedIn(actor);
    const staffViewer = authz.can(actor, 'application:review');
    const ids = [...new Set(applications.filter((application) => staffViewer || application.accountId === actor.accountId).map((application) => application.id))];
    const timelines = new Map(ids.map((id) => [id, [] as TimelineEntry[]]));
    if (ids.length === 0) return timelines;
    const rows = await this.#db.orm.em.getConnection().execute<EntryRow[]>(
      `select e."application_id", e."id", e."created_at", e."action", e."actor_kind", e."actor_id", e."note", a."email"
         from "enterprise_application_event" e left join "account" a on a."id" = e."actor_id"
        where e."application_id" = any(?::uuid[]) order by e."application_id", e."created_at", e."id"`,
      [`{${ids.join(',')}}`],
      'all',
    );
    for (const row of rows) {
      const visible = staffViewer || row.actor_kind === 'applicant';
      timelines.get(row.application_id)?.push({
        id: row.id,
        at: new Date(row.created_at),
        action: row.action,
        actorKind: row.actor_kind,
        actorId: visible ? row.actor_id : null,
        actorEmail: visible ? row.email : null,
        note: row.note,
      });
    }
    return timelines;
  }
}
