/**
 * Enterprise GraphQL (DESIGN §8.1): applications (members apply, staff review), organisations with their
 * keys, connecting IPs, members and usage, and the live `enterpriseApplicationChanged` and
 * `organisationConnectionsChanged` subscriptions. The scope only says "signed in"; the enterprise services
 * decide who may (staff review, organisation roles) — so GraphQL and REST cannot differ.
 */
import { batched } from '../../graphql-core/batch.ts';
import { builder } from '../../graphql-core/builder.ts';
import { keyLimitsArg, KeyLimitsInputRef, KeyLimitsRef } from '../api-key/key-limits.schema.ts';
import { organisationRoles } from '../../authz/actions.ts';
import * as authz from '../../authz/authz.ts';
import { AccountRef } from '../account/account.schema.ts';
import { SubscriptionRef } from '../billing/billing.schema.ts';
import { PlanRef } from '../plan/plan.schema.ts';
import { HISTORY_DEFAULT_PAGE, HISTORY_MAX_PAGE } from '../usage/usage.history.ts';
import { UsageHistoryRef, UsageRef } from '../usage/usage.schema.ts';
import { applicationKinds, applicationStates, actorKinds, timelineActions } from './enterprise.entity.ts';
import { APPLICATIONS_DEFAULT_PAGE, APPLICATIONS_MAX_PAGE } from './application-review.service.ts';
import type { TimelineEntry } from './application.timeline.ts';
import type { ApplicationPage, ApplicationView } from './application.view.ts';
import type { ConnectionView } from './connecting-ip.service.ts';
import type { CreatedOrganisationKey, OrganisationKeyView } from './organisation-key.service.ts';
import type { InvitationView, InviteResult, MemberView } from './organisation-member.service.ts';
import type { OrganisationView } from './organisation.service.ts';

const enumValues = <T extends string>(values: readonly T[], describe: Record<T, string>) =>
  Object.fromEntries(values.map((value) => [value, { value, description: describe[value] }])) as Record<T, { value: T; description: string }>;

export const ApplicationKindEnum = builder.enumType('EnterpriseApplicationKind', {
  description: 'What an organisation applies for.',
  values: enumValues(applicationKinds, {
    commercial: 'A business using svc for its own products: approved at once, the organisation is created on submit.',
    enterprise: 'A larger organisation wanting review (bigger pools, terms): waits for svc staff to approve or reject it.',
  }),
});

export const ApplicationStateEnum = builder.enumType('EnterpriseApplicationState', {
  description: 'Where an application stands.',
  values: enumValues(applicationStates, {
    pending_review: 'Waiting for svc staff.',
    approved: 'Approved: the organisation exists.',
    rejected: 'Rejected by staff, with a reason.',
    withdrawn: 'Withdrawn by the applicant while pending.',
  }),
});

const TimelineActionEnum = builder.enumType('EnterpriseApplicationAction', {
  description: 'What happened to an application.',
  values: enumValues(timelineActions, {
    submitted: 'The applicant submitted it.',
    approved: 'It was approved (by staff, or automatically for commercial applications).',
    rejected: 'Staff rejected it.',
    withdrawn: 'The applicant withdrew it.',
  }),
});

const ActorKindEnum = builder.enumType('EnterpriseApplicationActorKind', {
  description: 'Who made a timeline entry.',
  values: enumValues(actorKinds, { applicant: 'The applicant.', staff: 'svc staff.', system: 'svc itself (automatic approval).' }),
});

export const OrganisationRoleEnum = builder.enumType('OrganisationRole', {
  description: "A member's role in an organisation.",
  values: enumValues(organisationRoles, {
    member: 'Sees the organisation: keys (prefixes), connecting IPs, members and usage.',
    admin: 'Also mints and revokes organisation keys.',
    owner: 'Also invites, removes and changes the roles of members. One per organisation: the applicant.',
  }),
});

const InvitationRoleEnum = builder.enumType('OrganisationInvitationRole', {
  description: 'The role an invited member gets.',
  values: { admin: { value: 'admin' as const, description: 'Admin.' }, member: { value: 'member' as const, description: 'Member.' } },
});

const TimelineEntryRef = builder.objectRef<TimelineEntry>('EnterpriseApplicationEvent').implement({
  description: "One entry of an application's timeline.",
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Entry id.' }),
    at: t.expose('at', { type: 'DateTime', description: 'When it happened.' }),
    action: t.expose('action', { type: TimelineActionEnum, description: 'What happened.' }),
    actorKind: t.expose('actorKind', { type: ActorKindEnum, description: 'Who did it: the applicant, staff or svc.' }),
    actorId: t.exposeID('actorId', { nullable: true, description: "The acting account's id (staff's ids are shown to staff only)." }),
    actorEmail: t.exposeString('actorEmail', { nullable: true, description: "The acting account's email (staff's are shown to staff only)." }),
    note: t.exposeString('note', { nullable: true, description: 'The approval note or rejection reason, shown to the applicant.' }),
  }),
});

export const EnterpriseApplicationRef = builder.objectRef<ApplicationView>('EnterpriseApplication');

export const OrganisationRef = builder.objectRef<OrganisationView>('Organisation');

EnterpriseApplicationRef.implement({
  description: 'An application for an enterprise organisation: what was submitted, its state and its timeline.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Application id.' }),
    kind: t.expose('kind', { type: ApplicationKindEnum, description: 'commercial or enterprise.' }),
    organisation: t.exposeString('organisation', { description: "The organisation's name, as submitted." }),
    contactEmail: t.exposeString('contactEmail', { description: 'Who to contact about the application.' }),
    website: t.exposeString('website', { nullable: true, description: "The organisation's website, or null." }),
    country: t.exposeString('country', { description: 'ISO 3166-1 alpha-2 country code, e.g. CN.' }),
    useCase: t.exposeString('useCase', { description: 'What the organisation will use svc for.' }),
    expectedMonthlyTokens: t.exposeFloat('expectedMonthlyTokens', { description: 'Expected tokens per month (a whole number).' }),
    state: t.expose('state', { type: ApplicationStateEnum, description: 'Where it stands.' }),
    autoApproved: t.exposeBoolean('autoApproved', { description: 'True when approved on submit (commercial).' }),
    submittedAt: t.expose('submittedAt', { type: 'DateTime', description: 'When it was submitted.' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed.' }),
    decidedAt: t.expose('decidedAt', { type: 'DateTime', nullable: true, description: 'When it was approved, rejected or withdrawn; null while pending.' }),
    decisionNote: t.exposeString('decisionNote', { nullable: true, description: 'The approval note or the rejection reason.' }),
    packageId: t.exposeString('packageId', { nullable: true, description: 'The plan package the organisation got at approval.' }),
    organisationId: t.exposeID('organisationId', { nullable: true, description: 'The organisation created by the approval; null until then.' }),
    viewerCanDecide: t.boolean({
      description: 'Whether you may approve or reject it now: staff who review, while it is pending — never on an application they submitted.',
      resolve: (application, _args, { principal }) =>
        application.state === 'pending_review' && authz.can(principal, 'application:review', { type: 'application', id: application.id, applicantId: application.accountId }),
    }),
    organisationDetails: t.field({
      type: OrganisationRef,
      nullable: true,
      description: 'The organisation created by the approval, when the viewer belongs to it (or is staff).',
      resolve: (application, _args, { principal, services }) => (application.organisationId ? services.organisations.get(principal, application.organisationId) : null),
    }),
    timeline: t.field({
      type: [TimelineEntryRef],
      description: 'Every change, oldest first: who (staff are named to staff only), when, and the note.',
      // A page's timelines in one query (batch.ts), not one per application.
      resolve: (application, _args, context) =>
        batched(context, 'applicationTimeline', (applications: readonly ApplicationView[]) => context.services.enterpriseApplications.timelines(context.principal, applications), application),
    }),
    applicantId: t.exposeID('accountId', { description: "The applicant's account id." }),
    applicant: t.field({
      type: AccountRef,
      nullable: true,
      description: "Staff: the applicant's account (age = createdAt, plan, usage, keys, sessions through the staff fields of Account).",
      resolve: (application, _args, context) => batched(context, 'staffAccount', (ids: readonly string[]) => context.services.staff.findAccounts(context.principal, ids), application.accountId),
    }),
    otherApplications: t.field({
      type: [EnterpriseApplicationRef],
      description: "Staff: the applicant's other applications, newest first.",
      resolve: (application, _args, { principal, services }) => services.applicationReviews.others(principal, application),
    }),
  }),
});

const ApplicationPageInfoRef = builder.objectRef<ApplicationPage['pageInfo']>('EnterpriseApplicationPageInfo').implement({
  description: 'Where a page of applications ends.',
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage', { description: 'Whether more applications follow.' }),
    endCursor: t.exposeString('endCursor', { nullable: true, description: 'Pass as `after` for the next page; null on an empty page.' }),
  }),
});

const ApplicationPageRef = builder.objectRef<ApplicationPage>('EnterpriseApplicationPage').implement({
  description: 'A page of applications: pending ones oldest first (the review queue), others newest first.',
  fields: (t) => ({
    nodes: t.expose('nodes', { type: [EnterpriseApplicationRef], description: 'The applications of this page.' }),
    pageInfo: t.expose('pageInfo', { type: ApplicationPageInfoRef, description: 'Cursor of the next page.' }),
  }),
});

export const OrganisationKeyRef = builder.objectRef<OrganisationKeyView>('OrganisationKey').implement({
  description: 'An organisation key (svc_ent_…). The full token is only ever shown at creation.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Key id.' }),
    organisationId: t.exposeID('organisationId', { description: 'The organisation it bills.' }),
    name: t.exposeString('name', { description: 'A label for the key.' }),
    prefix: t.exposeString('prefix', { description: 'First 12 characters of the token.' }),
    last4: t.exposeString('last4', { description: 'Last 4 characters of the token.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'Creation time.' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true, description: 'Last use (recorded within seconds), or null.' }),
    allowedCidrs: t.exposeStringList('allowedCidrs', { description: 'The CIDRs calls may come from; empty = any address.' }),
    limits: t.expose('limits', { type: KeyLimitsRef, description: "The key's spend caps, rpm, model allow-list and expiry, with today's and this month's spend." }),
  }),
});

const CreatedOrganisationKeyRef = builder.objectRef<CreatedOrganisationKey>('CreatedOrganisationKey').implement({
  description: 'A newly minted organisation key with its token: copy it now, it is not shown again.',
  fields: (t) => ({
    key: t.expose('key', { type: OrganisationKeyRef, description: 'The stored key.' }),
    token: t.exposeString('token', { description: 'The full token (Authorization: Bearer <token>), shown once.' }),
  }),
});

export const OrganisationConnectionRef = builder.objectRef<ConnectionView>('OrganisationConnection').implement({
  description: 'An address an organisation key was used from: the socket peer, or X-Forwarded-For only from a trusted proxy.',
  fields: (t) => ({
    keyId: t.exposeID('keyId', { description: 'The key.' }),
    keyName: t.exposeString('keyName', { description: "The key's label." }),
    keyPrefix: t.exposeString('keyPrefix', { description: "The key's first 12 characters." }),
    ip: t.exposeString('ip', { description: 'The client address.' }),
    firstSeenAt: t.expose('firstSeenAt', { type: 'DateTime', description: 'First successful call from it.' }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime', description: 'Latest successful call from it (recorded within a second).' }),
    requestCount: t.exposeFloat('requestCount', { description: 'Successful authentications from it (a whole number).' }),
  }),
});

const OrganisationMemberRef = builder.objectRef<MemberView>('OrganisationMember').implement({
  description: 'A member of an organisation.',
  fields: (t) => ({
    accountId: t.exposeID('accountId', { description: "The member's account id." }),
    email: t.exposeString('email', { description: "The member's email." }),
    role: t.expose('role', { type: OrganisationRoleEnum, description: 'owner, admin or member.' }),
    joinedAt: t.expose('joinedAt', { type: 'DateTime', description: 'When they joined.' }),
  }),
});

const OrganisationInvitationRef = builder.objectRef<InvitationView>('OrganisationInvitation').implement({
  description: 'An invitation waiting for its email to sign up (and verify the address).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Invitation id (pass to removeOrganisationMember to cancel it).' }),
    email: t.exposeString('email', { description: 'Who is invited.' }),
    role: t.expose('role', { type: InvitationRoleEnum, description: 'The role they will get.' }),
    invitedAt: t.expose('invitedAt', { type: 'DateTime', description: 'When.' }),
  }),
});

const InviteResultRef = builder.objectRef<InviteResult>('OrganisationInviteResult').implement({
  description: 'What an invitation did: added an existing account, or recorded an invitation for a new one.',
  fields: (t) => ({
    member: t.expose('member', { type: OrganisationMemberRef, nullable: true, description: 'The new member, when the email had an account.' }),
    invitation: t.expose('invitation', { type: OrganisationInvitationRef, nullable: true, description: 'The waiting invitation, when it had none.' }),
  }),
});

OrganisationRef.implement({
  description: 'An enterprise organisation: a payer with its own plan package and pools, its keys, connecting IPs and members.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "Organisation id (also its payer id in usage and the ledger)." }),
    name: t.exposeString('name', { description: 'Its name.' }),
    packageId: t.exposeString('packageId', {
      description: 'Its plan package: free for a new commercial organisation (owner and admins upgrade through checkout), or what staff chose (approval, setAccountPackage).',
    }),
    plan: t.field({
      type: PlanRef,
      nullable: true,
      description: "The plan its package belongs to, with that plan's packages (find packageId among them for the package's name); null if the catalogue no longer has the package. Members see it even for plans the public catalogue hides (enterprise).",
      resolve: (organisation, _args, { services }) => services.plans.findPackage(organisation.packageId)?.plan ?? null,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created (approval).' }),
    disabled: t.exposeBoolean('disabled', { description: 'Disabled by staff: its keys are refused.' }),
    viewerRole: t.expose('viewerRole', {
      type: OrganisationRoleEnum,
      nullable: true,
      description: "Your role in it; null when staff who are not members look at it. Under Account.organisations: that account's role.",
    }),
    viewerCanManageKeys: t.boolean({
      description: 'Whether you may mint and revoke its keys (owner and admins, from a web session).',
      resolve: (organisation, _args, { principal }) =>
        principal?.credential.kind === 'web_session' && (organisation.viewerRole === 'owner' || organisation.viewerRole === 'admin'),
    }),
    viewerCanManageMembers: t.boolean({
      description: 'Whether you may invite, remove and change the roles of members (the owner, from a web session).',
      resolve: (organisation, _args, { principal }) => principal?.credential.kind === 'web_session' && organisation.viewerRole === 'owner',
    }),
    viewerCanManageBilling: t.boolean({
      description: 'Whether you may buy a package for it (it pays), and cancel or resume its subscription (owner and admins, from a web session).',
      resolve: (organisation, _args, { principal }) =>
        authz.can(principal, 'organisation:billing:manage', { type: 'organisation', id: organisation.id, membership: organisation.viewerRole }),
    }),
    subscription: t.field({
      type: SubscriptionRef,
      nullable: true,
      description: 'Its paid term; null when it never paid (Free), and for members who are not its owner or an admin. Upgrade with checkout(organisationId: …).',
      resolve: (organisation, _args, { principal, services }) =>
        authz.can(principal, 'organisation:billing:read', { type: 'organisation', id: organisation.id, membership: organisation.viewerRole })
          ? services.subscriptions.mine(principal, organisation.id)
          : null,
    }),
    keys: t.field({
      type: [OrganisationKeyRef],
      description: 'Its live keys, newest first (prefix and last 4 only).',
      resolve: (organisation, _args, { principal, services }) => services.organisationKeys.list(principal, organisation.id),
    }),
    connections: t.field({
      type: [OrganisationConnectionRef],
      description: 'Connecting IPs of its keys, most recently seen first.',
      args: { keyId: t.arg.id({ description: 'Only this key.' }) },
      resolve: (organisation, args, { principal, services }) => services.connectingIps.list(principal, organisation.id, { keyId: args.keyId ? String(args.keyId) : null }),
    }),
    members: t.field({
      type: [OrganisationMemberRef],
      description: 'Its members: the owner first, then admins, then members.',
      resolve: (organisation, _args, { principal, services }) => services.organisationMembers.list(principal, organisation.id),
    }),
    invitations: t.field({
      type: [OrganisationInvitationRef],
      description: 'Invitations waiting for their email to sign up.',
      resolve: (organisation, _args, { principal, services }) => services.organisationMembers.invitations(principal, organisation.id),
    }),
    usage: t.field({
      type: UsageRef,
      description: "Its pools now: used, limit and reset per class and window (as on /account/usage).",
      resolve: (organisation, _args, { principal, services }) => services.organisations.usage(principal, organisation.id),
    }),
    usageHistory: t.field({
      type: UsageHistoryRef,
      description: 'Its recent metered requests, newest first.',
      args: {
        first: t.arg.int({ defaultValue: HISTORY_DEFAULT_PAGE, description: `Page size, 1 to ${HISTORY_MAX_PAGE}.` }),
        after: t.arg.string({ description: 'endCursor of the previous page.' }),
      },
      resolve: (organisation, args, { principal, services }) => services.organisations.usageHistory(principal, organisation.id, args),
    }),
  }),
});

const ApplicationInputRef = builder.inputType('EnterpriseApplicationInput', {
  description: 'An application. Every field is checked; a bad one gets invalid_request naming it (`param`), with all of them in `fieldErrors`.',
  fields: (t) => ({
    kind: t.field({ type: ApplicationKindEnum, required: true, description: 'commercial (approved at once) or enterprise (reviewed by staff).' }),
    organisation: t.string({ required: true, description: "The organisation's name, 2 to 200 characters (unique on svc)." }),
    contactEmail: t.string({ required: true, description: 'Who to contact about the application.' }),
    website: t.string({ description: "The organisation's website (optional)." }),
    country: t.string({ required: true, description: 'ISO 3166-1 alpha-2 country code, e.g. CN, US.' }),
    useCase: t.string({ required: true, description: 'What you will use svc for, 10 to 5000 characters.' }),
    expectedMonthlyTokens: t.float({ required: true, description: 'Expected tokens per month, a whole number from 1 to 10^15.' }),
  }),
});

// ——— Queries ———

builder.queryField('enterpriseApplications', (t) =>
  t.field({
    type: ApplicationPageRef,
    authScopes: { signedIn: true },
    description: 'Staff: applications, optionally in one state. pending_review is the review queue, oldest first; other states newest first.',
    args: {
      state: t.arg({ type: ApplicationStateEnum, description: 'Only applications in this state; omit for all.' }),
      first: t.arg.int({ defaultValue: APPLICATIONS_DEFAULT_PAGE, description: `Page size, 1 to ${APPLICATIONS_MAX_PAGE}.` }),
      after: t.arg.string({ description: 'endCursor of the previous page.' }),
    },
    resolve: (_root, args, { principal, services }) => services.applicationReviews.list(principal, args),
  }),
);

builder.queryField('enterpriseApplication', (t) =>
  t.field({
    type: EnterpriseApplicationRef,
    nullable: true,
    authScopes: { signedIn: true },
    description: 'One application: staff see any, the applicant their own; null otherwise.',
    args: { id: t.arg.id({ required: true, description: 'Application id.' }) },
    resolve: (_root, args, { principal, services }) => services.enterpriseApplications.get(principal, String(args.id)),
  }),
);

builder.queryField('myEnterpriseApplications', (t) =>
  t.field({
    type: [EnterpriseApplicationRef],
    authScopes: { signedIn: true },
    description: 'Your applications, newest first.',
    resolve: (_root, _args, { principal, services }) => services.enterpriseApplications.mine(principal),
  }),
);

builder.queryField('organisations', (t) =>
  t.field({
    type: [OrganisationRef],
    authScopes: { signedIn: true },
    description: 'The organisations you belong to, with your role.',
    resolve: (_root, _args, { principal, services }) => services.organisations.list(principal),
  }),
);

builder.queryField('organisation', (t) =>
  t.field({
    type: OrganisationRef,
    nullable: true,
    authScopes: { signedIn: true },
    description: 'One organisation you belong to (staff: any); null otherwise.',
    args: { id: t.arg.id({ required: true, description: 'Organisation id.' }) },
    resolve: (_root, args, { principal, services }) => services.organisations.get(principal, String(args.id)),
  }),
);

// ——— Mutations ———

builder.mutationField('submitEnterpriseApplication', (t) =>
  t.field({
    type: EnterpriseApplicationRef,
    authScopes: { signedIn: true },
    description:
      'Applies for an organisation (web session). commercial: approved at once and the organisation is created (autoApproved). enterprise: waits for staff. One open application per account and per organisation name.',
    args: { input: t.arg({ type: ApplicationInputRef, required: true, description: 'The application.' }) },
    resolve: (_root, args, { principal, services }) => services.enterpriseApplications.submit(principal, args.input),
  }),
);

builder.mutationField('withdrawEnterpriseApplication', (t) =>
  t.field({
    type: EnterpriseApplicationRef,
    authScopes: { signedIn: true },
    description: 'Withdraws your application while it is pending.',
    args: { id: t.arg.id({ required: true, description: 'Application id.' }) },
    resolve: (_root, args, { principal, services }) => services.enterpriseApplications.withdraw(principal, String(args.id)),
  }),
);

builder.mutationField('approveEnterpriseApplication', (t) =>
  t.field({
    type: EnterpriseApplicationRef,
    authScopes: { signedIn: true },
    description: 'Staff: approves a pending application; the organisation is created on the package given (default enterprise). The applicant is emailed. Audited.',
    args: {
      id: t.arg.id({ required: true, description: 'Application id.' }),
      note: t.arg.string({ description: 'A note for the applicant (optional; goes into the timeline and the audit log).' }),
      packageId: t.arg.id({ description: 'Plan package of the new organisation; default from config (enterprise).' }),
    },
    resolve: (_root, args, { principal, services, requestId }) =>
      services.applicationReviews.approve(principal, String(args.id), { note: args.note, packageId: args.packageId ? String(args.packageId) : null, requestId }),
  }),
);

builder.mutationField('rejectEnterpriseApplication', (t) =>
  t.field({
    type: EnterpriseApplicationRef,
    authScopes: { signedIn: true },
    description: 'Staff: rejects a pending application with a reason the applicant is shown and emailed. Audited.',
    args: {
      id: t.arg.id({ required: true, description: 'Application id.' }),
      reason: t.arg.string({ required: true, description: 'Why (shown to the applicant; goes into the audit log).' }),
    },
    resolve: (_root, args, { principal, services, requestId }) => services.applicationReviews.reject(principal, String(args.id), { reason: args.reason, requestId }),
  }),
);

builder.mutationField('createOrganisationKey', (t) =>
  t.field({
    type: CreatedOrganisationKeyRef,
    authScopes: { signedIn: true },
    description: "Owner and admins (web session): mints an svc_ent_ key billing the organisation's pools. The token is in this response only.",
    args: {
      organisationId: t.arg.id({ required: true, description: 'Organisation id.' }),
      name: t.arg.string({ required: true, description: 'A label, 1 to 100 characters.' }),
      allowedCidrs: t.arg.stringList({ description: 'CIDRs (or single addresses) calls may come from, e.g. ["203.0.113.0/24"]; omit or empty for any address.' }),
      limits: t.arg({ type: KeyLimitsInputRef, description: 'Spend caps, rpm, model allow-list and expiry (optional).' }),
    },
    resolve: (_root, args, { principal, services }) =>
      services.organisationKeys.create(principal, String(args.organisationId), { name: args.name, allowedCidrs: args.allowedCidrs ?? [], ...keyLimitsArg(args.limits) }),
  }),
);

builder.mutationField('updateOrganisationKey', (t) =>
  t.field({
    type: OrganisationKeyRef,
    authScopes: { signedIn: true },
    description: 'Owner and admins (web session): renames an organisation key or changes its limits. Takes effect at once on every server.',
    args: {
      organisationId: t.arg.id({ required: true, description: 'Organisation id.' }),
      id: t.arg.id({ required: true, description: 'Key id.' }),
      name: t.arg.string({ description: 'A new label (optional).' }),
      limits: t.arg({ type: KeyLimitsInputRef, description: 'The limits to change; fields left out stay as they are.' }),
    },
    resolve: (_root, args, { principal, services }) =>
      services.organisationKeys.update(principal, String(args.organisationId), String(args.id), { ...(args.name == null ? {} : { name: args.name }), ...keyLimitsArg(args.limits) }),
  }),
);

builder.mutationField('revokeOrganisationKey', (t) =>
  t.field({
    type: OrganisationKeyRef,
    authScopes: { signedIn: true },
    description:
      "Owner and admins (web session): revokes an organisation key; it stops working at once on every server. Staff may revoke any organisation's key with a reason (audited).",
    args: {
      id: t.arg.id({ required: true, description: 'Key id.' }),
      organisationId: t.arg.id({ description: 'Organisation id (optional; checked when given).' }),
      reason: t.arg.string({ description: "Why: required when staff revoke a key of an organisation they are not a member of (it goes into the audit log)." }),
    },
    resolve: (_root, args, { principal, services, requestId }) =>
      services.organisationKeys.revoke(principal, String(args.id), args.organisationId ? String(args.organisationId) : null, { reason: args.reason, requestId }),
  }),
);

builder.mutationField('inviteOrganisationMember', (t) =>
  t.field({
    type: InviteResultRef,
    authScopes: { signedIn: true },
    description: 'Owner (web session): adds the account with this email, or invites the email to join when it signs up.',
    args: {
      organisationId: t.arg.id({ required: true, description: 'Organisation id.' }),
      email: t.arg.string({ required: true, description: 'Their email.' }),
      role: t.arg({ type: InvitationRoleEnum, defaultValue: 'member', description: 'admin or member (default member).' }),
    },
    resolve: (_root, args, { principal, services }) => services.organisationMembers.invite(principal, String(args.organisationId), { email: args.email, role: args.role }),
  }),
);

builder.mutationField('setOrganisationMemberRole', (t) =>
  t.field({
    type: OrganisationMemberRef,
    authScopes: { signedIn: true },
    description: "Owner (web session): changes a member's role; making someone owner hands ownership over (you become admin).",
    args: {
      organisationId: t.arg.id({ required: true, description: 'Organisation id.' }),
      accountId: t.arg.id({ required: true, description: "The member's account id." }),
      role: t.arg({ type: OrganisationRoleEnum, required: true, description: 'The new role.' }),
    },
    resolve: (_root, args, { principal, services }) => services.organisationMembers.setRole(principal, String(args.organisationId), String(args.accountId), args.role),
  }),
);

builder.mutationField('removeOrganisationMember', (t) =>
  t.field({
    type: 'Boolean',
    authScopes: { signedIn: true },
    description: 'Owner (web session): removes a member (or cancels an invitation, by its id). The owner cannot be removed.',
    args: {
      organisationId: t.arg.id({ required: true, description: 'Organisation id.' }),
      accountId: t.arg.id({ required: true, description: "The member's account id, or an invitation id." }),
    },
    resolve: (_root, args, { principal, services }) => services.organisationMembers.remove(principal, String(args.organisationId), String(args.accountId)),
  }),
);

// ——— Subscriptions ———

builder.subscriptionField('enterpriseApplicationChanged', (t) =>
  t.field({
    type: EnterpriseApplicationRef,
    authScopes: { signedIn: true },
    description: 'An application as it is now, whenever one changes on any server (submitted, withdrawn, approved, rejected). Staff: every application; others: their own.',
    subscribe: (_root, _args, { principal, services }) => services.enterpriseApplications.changes(principal),
    resolve: async (event, _args, { principal, services }) => {
      const application = await services.enterpriseApplications.get(principal, event.applicationId);
      if (!application) throw new Error('application vanished');
      return application;
    },
  }),
);

builder.subscriptionField('organisationConnectionsChanged', (t) =>
  t.field({
    type: [OrganisationConnectionRef],
    authScopes: { signedIn: true },
    description: "The organisation's connecting IPs, now and again whenever its keys are used from any server (at most about once a second).",
    args: { organisationId: t.arg.id({ required: true, description: 'Organisation id.' }) },
    subscribe: (_root, args, { principal, services }) => services.connectingIps.watch(principal, String(args.organisationId)),
    resolve: (_event, args, { principal, services }) => services.connectingIps.list(principal, String(args.organisationId)),
  }),
);

builder.subscriptionField('organisationUsageUpdated', (t) =>
  t.field({
    type: UsageRef,
    authScopes: { signedIn: true },
    description: "The organisation's usage, now and again whenever one of its keys' requests is admitted or settled on any server (as usageUpdated does for you).",
    args: { organisationId: t.arg.id({ required: true, description: 'Organisation id.' }) },
    subscribe: async (_root, args, { principal, services }) => {
      await services.organisations.assertCanRead(principal, String(args.organisationId));
      return services.usage.events.watch(String(args.organisationId));
    },
    resolve: (generation, args, { principal, services }) => services.organisations.usage(principal, String(args.organisationId), generation),
  }),
);

const AccountKindEnum = builder.enumType('AccountKind', {
  description: 'What an account is.',
  values: {
    person: { value: 'person' as const, description: 'Someone who signs in.' },
    organisation: { value: 'organisation' as const, description: 'An enterprise organisation: a payer with its own package and pools; it never signs in (its id is an organisation id).' },
  },
});

builder.objectField(AccountRef, 'kind', (t) => t.expose('kind', { type: AccountKindEnum, description: 'person, or organisation for an enterprise organisation.' }));

// Staff: an account's organisations (DESIGN §8.2 `account(id)`).
builder.objectField(AccountRef, 'organisations', (t) =>
  t.field({
    type: [OrganisationRef],
    description: 'Staff: the organisations the account belongs to, with its role in each.',
    resolve: (account, _args, { principal, services }) => services.organisations.ofAccount(principal, account.id),
  }),
);
