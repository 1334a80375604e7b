import { builder } from '../../graphql-core/builder.ts';
import { AUDIT_DEFAULT_PAGE, AUDIT_MAX_PAGE, type AuditPage, type AuditRecord } from './audit.service.ts';

const AuditLogEntryRef = builder.objectRef<AuditRecord>('AuditLogEntry').implement({
  description: 'One staff action or payment state change, as the append-only audit log recorded it.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Entry id; later entries have larger ids.' }),
    at: t.expose('at', { type: 'DateTime', description: 'When it happened.' }),
    actorId: t.exposeID('actorId', { nullable: true, description: 'The staff account that acted; null for the system (a job, a payment, the admin CLI).' }),
    actorEmail: t.exposeString('actorEmail', { nullable: true, description: "The actor's email today, if the account still exists." }),
    action: t.exposeString('action', { description: 'What was done, e.g. account:disable, account:set-package, api-key:revoke-any.' }),
    targetType: t.exposeString('targetType', { description: 'Kind of thing acted on: account, api_key, organisation, application, order.' }),
    targetId: t.exposeString('targetId', { description: 'Id of the thing acted on.' }),
    before: t.expose('before', { type: 'JSON', nullable: true, description: 'The fields that changed, before.' }),
    after: t.expose('after', { type: 'JSON', nullable: true, description: 'The fields that changed, after.' }),
    reason: t.exposeString('reason', { nullable: true, description: 'Why, as the actor gave it.' }),
    requestId: t.exposeString('requestId', { nullable: true, description: 'The request (mbr_…) that made the change, to find it in the logs.' }),
  }),
});

const AuditLogPageInfoRef = builder.objectRef<AuditPage['pageInfo']>('AuditLogPageInfo').implement({
  description: 'Where a page of the audit log ends.',
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage', { description: 'Whether older entries follow.' }),
    endCursor: t.exposeString('endCursor', { nullable: true, description: 'Pass as `after` for the next (older) page; null on an empty page.' }),
  }),
});

export const AuditLogPageRef = builder.objectRef<AuditPage>('AuditLogPage').implement({
  description: 'A page of the audit log, newest first.',
  fields: (t) => ({
    nodes: t.expose('nodes', { type: [AuditLogEntryRef], description: 'The entries of this page, newest first.' }),
    pageInfo: t.expose('pageInfo', { type: AuditLogPageInfoRef, description: 'Cursor of the next page.' }),
  }),
});

export const AuditLogFilterRef = builder.inputType('AuditLogFilter', {
  description: 'Narrows the audit log; every field given must match.',
  fields: (t) => ({
    actorId: t.id({ description: 'Only what this staff account did.' }),
    actorEmail: t.string({ description: 'Only what the staff account with this email did.' }),
    aboutAccountId: t.id({ description: 'Only entries about this account: the account itself and its API keys.' }),
    targetType: t.string({ description: 'Only entries about this kind of thing (account, api_key, …).' }),
    targetId: t.string({ description: 'Only entries about this thing (with targetType).' }),
    action: t.string({ description: 'Only this action, e.g. account:disable.' }),
  }),
});

builder.queryField('auditLog', (t) =>
  t.field({
    type: AuditLogPageRef,
    authScopes: { signedIn: true },
    description: 'Staff: the audit log, newest first (support and admin, from a web session).',
    args: {
      filter: t.arg({ type: AuditLogFilterRef, description: 'Which entries.' }),
      first: t.arg.int({ defaultValue: AUDIT_DEFAULT_PAGE, description: `Page size, 1 to ${AUDIT_MAX_PAGE}.` }),
      after: t.arg.string({ description: 'endCursor of the previous page.' }),
    },
    resolve: (_root, args, { principal, services }) =>
      services.audit.list(
        principal,
        {
          ...args.filter,
          actorId: args.filter?.actorId == null ? null : String(args.filter.actorId),
          aboutAccountId: args.filter?.aboutAccountId == null ? null : String(args.filter.aboutAccountId),
        },
        { first: args.first, after: args.after },
      ),
  }),
);
