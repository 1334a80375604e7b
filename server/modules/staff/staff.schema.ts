/**
 * Staff mutations on accounts (DESIGN §8.2). The scope only says "signed in": `StaffService` decides who
 * may (support or admin, from a web session) and writes the audit row. `revokeApiKey(id, reason)` is in
 * api-key.schema.ts (one mutation for owners and staff).
 */
import { builder } from '../../graphql/builder.ts';
import { AccountRef, AccountRoleEnum } from '../account/account.schema.ts';

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
