/**
 * Enterprise tables (DESIGN §8.1). The organisation itself is an `account` row of kind `organisation`
 * (its plan package, pools, ledger); `Organisation` holds what only organisations have (their name), with
 * the account's id as its primary key.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { organisationRoles } from '../../authz/actions.ts';
import { baseProperties } from '../../db/base.entity.ts';

export const applicationKinds = ['commercial', 'enterprise'] as const;
export type ApplicationKind = (typeof applicationKinds)[number];
export const applicationStates = ['pending_review', 'approved', 'rejected', 'withdrawn'] as const;
export type ApplicationState = (typeof applicationStates)[number];
export const timelineActions = ['submitted', 'approved', 'rejected', 'withdrawn'] as const;
export type TimelineAction = (typeof timelineActions)[number];
export const actorKinds = ['applicant', 'staff', 'system'] as const;
export type ActorKind = (typeof actorKinds)[number];
export const invitationRoles = ['admin', 'member'] as const;

export const Organisation = defineEntity({
  name: 'Organisation',
  tableName: 'organisation',
  properties: {
    id: p.uuid().primary(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    name: p.string().length(200),
    /** The name folded for uniqueness (trimmed, single spaces, lower case). */
    nameKey: p.string().length(200).unique(),
    applicationId: p.uuid().nullable(),
  },
});

export const OrganisationMember = defineEntity({
  name: 'OrganisationMember',
  tableName: 'organisation_member',
  properties: {
    ...baseProperties,
    organisationId: p.uuid(),
    accountId: p.uuid().index(),
    role: p.enum(organisationRoles),
  },
});

export const OrganisationInvitation = defineEntity({
  name: 'OrganisationInvitation',
  tableName: 'organisation_invitation',
  properties: {
    ...baseProperties,
    organisationId: p.uuid(),
    /** Lower-cased. */
    email: p.string(),
    role: p.enum(invitationRoles),
    invitedBy: p.uuid().nullable(),
    acceptedAt: p.datetime().nullable(),
  },
});

export const EnterpriseApplication = defineEntity({
  name: 'EnterpriseApplication',
  tableName: 'enterprise_application',
  properties: {
    ...baseProperties,
    accountId: p.uuid(),
    kind: p.enum(applicationKinds),
    organisation: p.string().length(200),
    organisationKey: p.string().length(200),
    contactEmail: p.string(),
    website: p.string().length(500).nullable(),
    country: p.string().length(2),
    useCase: p.text(),
    expectedMonthlyTokens: p.bigint('number'),
    state: p.enum(applicationStates),
    autoApproved: p.boolean().default(false),
    organisationId: p.uuid().nullable(),
    packageId: p.string().length(64).nullable(),
    decidedBy: p.uuid().nullable(),
    decidedAt: p.datetime().nullable(),
    decisionNote: p.text().nullable(),
  },
});
export type IEnterpriseApplication = InferEntity<typeof EnterpriseApplication>;

export const EnterpriseApplicationEvent = defineEntity({
  name: 'EnterpriseApplicationEvent',
  tableName: 'enterprise_application_event',
  properties: {
    ...baseProperties,
    applicationId: p.uuid(),
    actorId: p.uuid().nullable(),
    actorKind: p.enum(actorKinds),
    action: p.enum(timelineActions),
    note: p.text().nullable(),
  },
});
