/**
 * Every action a service checks before it acts, and who may do it (DESIGN §8.2). This table is the one
 * place rights are decided: services call `authz.assert(actor, action, resource)`, the web app reads
 * `viewerCan…` fields derived from `authz.can`, and a new right is a new row here.
 *
 * Three kinds of rule:
 * - `self`: any signed-in account acting on its own things (its keys, its sessions, its device logins).
 * - `staff`: the account's role must be at least `role` (support < admin).
 * - `organisation`: the actor's membership role in the organisation, passed in as the resource, must be at
 *   least `role` (member < admin < owner); staff are not members and get no rights from their role here.
 *
 * `webSession: true` means the action is refused to bearer credentials (API keys, device-login tokens): a
 * leaked key must not be able to mint keys, end sessions or act as staff ("staff act only from a web session").
 * `webSession: 'or-device'` also accepts a device-login token — a CLI the member approved in a browser
 * (`svc keys …`, issue 51) — but still no API key.
 */
import type { AccountRole } from './principal.ts';

export type StaffRole = Exclude<AccountRole, 'member'>;

export const organisationRoles = ['member', 'admin', 'owner'] as const;
export type OrganisationRole = (typeof organisationRoles)[number];

export type ActionRule =
  | { who: 'self'; webSession: boolean | 'or-device'; description: string }
  | { who: 'staff'; role: StaffRole; webSession: true; description: string }
  | { who: 'organisation'; role: OrganisationRole; webSession: boolean; description: string };

const self = (description: string, webSession: boolean | 'or-device') => ({ who: 'self' as const, webSession, description });
const staff = (role: StaffRole, description: string) => ({ who: 'staff' as const, role, webSession: true as const, description });
const organisation = (role: OrganisationRole, description: string, webSession: boolean) => ({ who: 'organisation' as const, role, webSession, description });

export const actions = {
  // Members, on their own account.
  'api-key:manage': self('List, mint, limit and revoke your own personal API keys (from a browser, or a CLI signed in by device login).', 'or-device'),
  'session:manage': self('List and end your own sessions (browsers and device logins).', true),
  'device:approve': self('Open, approve or deny a device login for your account.', true),
  'oauth:approve': self("Approve or deny an MCP client asking, by OAuth, to use svc's tools for your account.", true),
  'billing:read': self('See your own subscription and orders.', false),
  'credit:read': self('See your own credit balance and entries (API keys and the CLI too).', false),
  'credit:redeem': self('Redeem a credit code for your own account (API keys and the CLI too: a code adds credit, nothing leaves).', false),
  'export:read': self('Download your own usage, payments and credit entries as CSV (API keys and the CLI too).', false),
  'billing:manage': self('Buy a package, pay with the sandbox, cancel or resume your own subscription.', true),
  'alerts:read': self('See your own spend alert settings, notices and webhook deliveries.', false),
  'alerts:manage': self('Choose your spend alert thresholds, email, and webhook (URL, secret, test), from a browser or a CLI signed in by device login.', 'or-device'),

  // Support staff (and admins).
  'application:review': staff('support', 'Review enterprise applications: approve or reject them.'),
  'account:read': staff('support', 'Look any account up: plan, usage, keys, sessions.'),
  'account:disable': staff('support', 'Disable and enable an account.'),
  'account:set-package': staff('support', "Change an account's plan package, with a reason."),
  'api-key:revoke-any': staff('support', "Revoke another account's API key, with a reason."),
  'session:end-any': staff('support', "End every session of another account, with a reason."),
  'audit:read': staff('support', 'Read the audit log.'),
  'stats:read': staff('support', 'Read the dashboard statistics.'),
  'order:read': staff('support', 'Look orders up by id or provider trade number, with their notifications.'),
  'order:requery': staff('support', 'Ask the payment provider again about an unpaid order.'),
  'upstream:status': staff('support', 'See whether the model servers svc sends chat to are configured and answering.'),
  'mail:dev-outbox:read': staff('support', 'Read the development outbox: mail svc kept instead of sending (no mail server, not production).'),

  // Admins only.
  'staff:set-role': staff('admin', "Change an account's role (member, support, admin), and act on staff accounts."),
  'order:refund': staff('admin', 'Refund a paid order, with a reason.'),
  'pool:override': staff('admin', "Override an account's usage pools."),
  'credit:mint': staff('admin', 'Mint batches of credit codes and export them as CSV.'),

  // Organisations (enterprise): decided by the actor's membership role in the organisation.
  'organisation:read': organisation('member', 'See an organisation: its keys (prefixes), connecting IPs, members and usage.', false),
  'organisation:keys:create': organisation('admin', 'Mint an organisation key (svc_ent_…).', true),
  'organisation:keys:revoke': organisation('admin', 'Revoke an organisation key.', true),
  'organisation:members:manage': organisation('owner', "Add and remove an organisation's members and change their roles.", true),
  'organisation:billing:read': organisation('admin', "See an organisation's subscription and orders.", false),
  'organisation:alerts:read': organisation('admin', "See an organisation's spend alert settings and webhook deliveries.", false),
  'organisation:alerts:manage': organisation('admin', "Choose an organisation's spend alert thresholds, email, and webhook.", true),
  'organisation:billing:manage': organisation('admin', 'Buy a package for an organisation (it pays), pay its orders, cancel or resume its subscription.', true),
} as const satisfies Record<string, ActionRule>;

export type Action = keyof typeof actions;
export type StaffAction = { [A in Action]: (typeof actions)[A]['who'] extends 'staff' ? A : never }[Action];
export type OrganisationAction = { [A in Action]: (typeof actions)[A]['who'] extends 'organisation' ? A : never }[Action];

/** Staff actions aimed at one account: acting on a staff account needs an admin, and nobody acts on themselves. */
export const accountTargetedActions = ['account:disable', 'account:set-package', 'api-key:revoke-any', 'session:end-any', 'staff:set-role'] as const satisfies readonly StaffAction[];
export type AccountTargetedAction = (typeof accountTargetedActions)[number];

/**
 * Actions staff may not take on their own account, nor on an organisation they belong to: locking
 * themselves out, or granting themselves (or their organisation) more.
 */
export const notOnSelf: ReadonlySet<Action> = new Set<Action>(['account:disable', 'account:set-package', 'staff:set-role']);

/** Why a staff decision was refused as a decision on themselves (the audit row and the envelope say which). */
export type SelfDecision = 'own_account' | 'own_organisation' | 'own_application';

export const staffRank: Record<AccountRole, number> = { member: 0, support: 1, admin: 2 };
export const organisationRank: Record<OrganisationRole, number> = { member: 1, admin: 2, owner: 3 };
