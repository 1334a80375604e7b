/**
 * Staff queries and mutations on accounts (DESIGN §8.2). The scope only says "signed in": `StaffService`
 * decides who may (support or admin, from a web session) and writes the audit row. `revokeApiKey(id,
 * reason)` is in api-key.schema.ts (one mutation for owners and staff).
 *
 * `account(id)` returns the same `Account` type as `me`; what only staff may see about an account (pools,
 * ledger, keys, sessions, audit entries) is added to that type here, each field asserting `account:read` in
 * the service. Another module adds its part of an account the same way, in its own schema file:
 *
 *   builder.objectField(AccountRef, 'organisations', (t) => t.field({ type: [OrganisationRef],
 *     resolve: (account, _args, { principal, services }) => services.organisations.ofAccount(principal, account.id) }));
 */
import { builder } from '../../graphql-core/builder.ts';
import { AccountRef, AccountRoleEnum } from '../account/account.schema.ts';
import { ApiKeyRef } from '../api-key/api-key.schema.ts';
import { AuditLogPageRef } from '../audit/audit.schema.ts';
import { AUDIT_DEFAULT_PAGE, AUDIT_MAX_PAGE } from '../audit/audit.service.ts';
import type { AccountView } from '../account/account.service.ts';
import { SessionRef } from '../session/session.schema.ts';
import { HISTORY_DEFAULT_PAGE, HISTORY_MAX_PAGE } from '../usage/usage.history.ts';
import { UsageHistoryRef, UsageRecordRef, UsageRef } from '../usage/usage.schema.ts';
import { ACCOUNTS_DEFAULT_PAGE, ACCOUNTS_MAX_PAGE, type AccountPage } from './staff.service.ts';

const AccountPageInfoRef = builder.objectRef<AccountPage['pageInfo']>('AccountPageInfo').implement({
  description: 'Where a page of accounts ends.',
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage', { description: 'Whether older accounts follow.' }),
    endCursor: t.exposeString('endCursor', { nullable: true, description: 'Pass as `after` for the next page; null on an empty page.' }),
  }),
});

const AccountPageRef = builder.objectRef<AccountPage>('AccountPage').implement({
  description: 'A page of accounts, newest first.',
  fields: (t) => ({
    nodes: t.expose('nodes', { type: [AccountRef], description: 'The accounts of this page, newest first.' }),
    pageInfo: t.expose('pageInfo', { type: AccountPageInfoRef, description: 'Cursor of the next page.' }),
  }),
});

builder.queryField('accounts', (t) =>
  t.field({
    type: AccountPageRef,
    authScopes: { signedIn: true },
    description:
      'Staff: accounts, newest first — every one, the one with an id, or those whose email (or, after an @, whose domain) starts with `search` (support and admin, from a web session). `staffSearch` finds organisations, keys, requests and orders too.',
    args: {
      search: t.arg.string({ description: 'An account id (exact match), the start of an email address (any case), @ and the start of a domain, or a domain (acme.com); empty for every account.' }),
      first: t.arg.int({ defaultValue: ACCOUNTS_DEFAULT_PAGE, description: `Page size, 1 to ${ACCOUNTS_MAX_PAGE}.` }),
      after: t.arg.string({ description: 'endCursor of the previous page.' }),
    },
    resolve: (_root, args, { principal, services }) => services.staff.searchAccounts(principal, args),
  }),
);

builder.queryField('account', (t) =>
  t.field({
    type: AccountRef,
    nullable: true,
    authScopes: { signedIn: true },
    description: 'Staff: one account, with its pools, ledger, keys, sessions and audit entries; null when there is no account with that id.',
    args: { id: t.arg.id({ required: true, description: 'Account id.' }) },
    resolve: (_root, args, { principal, services }) => services.staff.findAccount(principal, String(args.id)),
  }),
);

builder.queryField('request', (t) =>
  t.field({
    type: UsageRecordRef,
    nullable: true,
    authScopes: { signedIn: true },
    description:
      "Staff: any account's request by the id its reply carried in x-request-id (svc's, or the x-svc-request-id the client sent); null when there is none (support and admin, from a web session).",
    args: { requestId: t.arg.string({ required: true, description: 'mbr_… as the reply carried it.' }) },
    resolve: (_root, args, { principal, services }) => services.staff.request(principal, args.requestId),
  }),
);

builder.objectField(UsageRecordRef, 'payer', (t) =>
  t.field({
    type: AccountRef,
    nullable: true,
    description: 'Staff: the account (or organisation) whose pools the request was charged to.',
    resolve: (record, _args, { principal, services }) => services.staff.payerOfRequest(principal, record),
  }),
);

// What staff see about an account. Each asserts `account:read`: a member asking for these on `me` is refused.
builder.objectFields(AccountRef, (t) => ({
  usage: t.field({
    type: UsageRef,
    description: "Staff: the account's usage pools now (used, limit, reset per class and window).",
    resolve: (account: AccountView, _args, { principal, services }) => services.staff.accountUsage(principal, account),
  }),
  usageHistory: t.field({
    type: UsageHistoryRef,
    description: "Staff: the account's recent requests from the usage ledger, newest first.",
    args: {
      first: t.arg.int({ defaultValue: HISTORY_DEFAULT_PAGE, description: `Page size, 1 to ${HISTORY_MAX_PAGE}.` }),
      after: t.arg.string({ description: 'endCursor of the previous page.' }),
    },
    resolve: (account, args, { principal, services }) => services.staff.accountHistory(principal, account, args),
  }),
  apiKeys: t.field({
    type: [ApiKeyRef],
    description: "Staff: the account's live personal API keys (prefix and last 4 only).",
    resolve: (account, _args, { principal, services }) => services.staff.accountKeys(principal, account.id),
  }),
  sessions: t.field({
    type: [SessionRef],
    description: "Staff: the account's live sessions (browsers and device-login tokens).",
    resolve: (account, _args, { principal, services }) => services.staff.accountSessions(principal, account.id),
  }),
  auditLog: t.field({
    type: AuditLogPageRef,
    description: 'Staff: audit entries about this account and its API keys, newest first.',
    args: {
      first: t.arg.int({ defaultValue: AUDIT_DEFAULT_PAGE, description: `Page size, 1 to ${AUDIT_MAX_PAGE}.` }),
      after: t.arg.string({ description: 'endCursor of the previous page.' }),
    },
    resolve: (account, args, { principal, services }) => services.staff.accountAudit(principal, account.id, args),
  }),
}));

builder.mutationField('disableAccount', (t) =>
  t.field({
    type: AccountRef,
    authScopes: { signedIn: true },
    description:
      'Staff: disables an account. Every credential of it is refused with 401 account_disabled and its sessions end, on every server at once; its API keys work again once it is enabled. Audited.',
    args: {
      id: t.arg.id({ required: true, description: 'Account id.' }),
      reason: t.arg.string({ required: true, description: 'Why (goes into the audit log).' }),
    },
    resolve: (_root, args, { principal, services, requestId }) => services.staff.disableAccount(principal, String(args.id), { reason: args.reason, requestId }),
  }),
);

builder.mutationField('enableAccount', (t) =>
  t.field({
    type: AccountRef,
    authScopes: { signedIn: true },
    description: 'Staff: enables a disabled account; its keys work again and its owner can sign in. Audited.',
    args: {
      id: t.arg.id({ required: true, description: 'Account id.' }),
      reason: t.arg.string({ description: 'Why, if you want it in the audit log.' }),
    },
    resolve: (_root, args, { principal, services, requestId }) => services.staff.enableAccount(principal, String(args.id), { reason: args.reason, requestId }),
  }),
);

builder.mutationField('endSessions', (t) =>
  t.field({
    type: 'Int',
    authScopes: { signedIn: true },
    description: 'Staff: signs an account out everywhere (browsers and device-login tokens), on every server at once; returns how many sessions ended. Audited.',
    args: {
      accountId: t.arg.id({ required: true, description: 'Account id.' }),
      reason: t.arg.string({ required: true, description: 'Why (goes into the audit log).' }),
    },
    resolve: (_root, args, { principal, services, requestId }) => services.staff.endSessions(principal, String(args.accountId), { reason: args.reason, requestId }),
  }),
);

builder.mutationField('setAccountRole', (t) =>
  t.field({
    type: AccountRef,
    authScopes: { signedIn: true },
    description: "Admin: changes an account's role (member, support, admin); not your own. Takes effect on the account's next request. Audited.",
    args: {
      accountId: t.arg.id({ required: true, description: 'Account id.' }),
      role: t.arg({ type: AccountRoleEnum, required: true, description: 'The new role.' }),
      reason: t.arg.string({ description: 'Why, if you want it in the audit log.' }),
    },
    resolve: (_root, args, { principal, services, requestId }) =>
      services.staff.setAccountRole(principal, String(args.accountId), args.role, { reason: args.reason, requestId }),
  }),
);

builder.mutationField('setAccountPackage', (t) =>
  t.field({
    type: AccountRef,
    authScopes: { signedIn: true },
    description:
      "Staff: puts an account on a plan package (see `plans`), for good or until a time, after which it returns to Free. Its pools, models and rate limit follow at once on every server. Audited.",
    args: {
      accountId: t.arg.id({ required: true, description: 'Account id.' }),
      packageId: t.arg.id({ required: true, description: 'Package id, e.g. pro or max_x5.' }),
      reason: t.arg.string({ required: true, description: 'Why (goes into the audit log).' }),
      until: t.arg({ type: 'DateTime', description: 'When the package ends; omit or null for no end.' }),
    },
    resolve: (_root, args, { principal, services, requestId }) =>
      services.staff.setAccountPackage(principal, String(args.accountId), String(args.packageId), { reason: args.reason, until: args.until ?? null, requestId }),
  }),
);
