/** The authz table, decided without a database: roles, targets, organisation membership and the web-session rule. */
import { describe, expect, it } from 'vitest';
import { actions, type Action } from '../../../server/authz/actions.ts';
import * as authz from '../../../server/authz/authz.ts';
import { AppError } from '../../../server/errors/app-error.ts';
import type { AccountRole } from '../../../server/authz/principal.ts';
import type { CredentialKind, Principal } from '../../../server/authz/principal.ts';

function actor(role: AccountRole, kind: CredentialKind = 'web_session', accountId = `acct-${role}`): Principal {
  return { accountId, email: `${role}@example.com`, role, payer: { kind: 'account', id: accountId, package: 'free' }, credential: { kind, id: 'cred-1' } };
}

function denial(run: () => void): AppError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected a denial');
}

const staffActions = (Object.keys(actions) as Action[]).filter((action) => actions[action].who === 'staff');
const supportActions = staffActions.filter((action) => actions[action].who === 'staff' && (actions[action] as { role: string }).role === 'support');
const adminActions = staffActions.filter((action) => !supportActions.includes(action));

describe('authz', () => {
  it('lists the staff actions of DESIGN §8.2 with support and admin split as written', () => {
    expect(supportActions.sort()).toEqual(
      ['account:disable', 'account:read', 'account:set-package', 'api-key:revoke-any', 'application:review', 'audit:read', 'session:end-any', 'stats:read', 'order:read', 'order:requery', 'upstream:status', 'mail:dev-outbox:read'].sort(),
    );
    expect(adminActions.sort()).toEqual(['credit:mint', 'order:refund', 'pool:override', 'staff:set-role']);
    for (const action of staffActions) expect(actions[action].webSession, action).toBe(true);
  });

  it('nobody signed in: 401 sign_in_required for every action', () => {
    for (const action of ['api-key:manage', 'audit:read', 'staff:set-role'] as const) {
      const error = denial(() => authz.assert(null, action));
      expect(error.code).toBe('sign_in_required');
      expect(error.status).toBe(401);
      expect(authz.can(null, action)).toBe(false);
    }
  });

  it('members: 403 forbidden for every staff action, naming the rule', () => {
    for (const action of staffActions) {
      const error = denial(() => authz.assert(actor('member'), action as 'audit:read'));
      expect(error.code, action).toBe('forbidden');
      expect(error.status).toBe(403);
      expect(error.message).toContain(action);
      expect(error.message).toContain("this account's role is member");
    }
  });

  it('support: the support actions, not the admin ones; admin: all', () => {
    for (const action of supportActions) expect(authz.can(actor('support'), action as 'audit:read'), action).toBe(true);
    for (const action of adminActions) {
      expect(authz.can(actor('support'), action as 'staff:set-role'), action).toBe(false);
      expect(denial(() => authz.assert(actor('support'), action as 'staff:set-role')).message).toContain('is for admins');
    }
    for (const action of staffActions) expect(authz.can(actor('admin'), action as 'audit:read'), action).toBe(true);
  });

  it('staff with a bearer credential: 401 sign_in_required telling them to use a web session', () => {
    for (const kind of ['api_key', 'session_token', 'enterprise_key'] as const) {
      const error = denial(() => authz.assert(actor('admin', kind), 'account:disable'));
      expect(error.code).toBe('sign_in_required');
      expect(error.message).toContain('needs a web session (account:disable)');
      expect(error.message).toContain('/admin');
    }
    // A member with a key still hears "forbidden": no credential would give them the right.
    expect(denial(() => authz.assert(actor('member', 'api_key'), 'account:disable')).code).toBe('forbidden');
  });

  it('self actions: anyone signed in, from a web session only', () => {
    for (const action of ['api-key:manage', 'session:manage', 'device:approve'] as const) {
      expect(authz.can(actor('member'), action)).toBe(true);
      const error = denial(() => authz.assert(actor('member', 'api_key'), action));
      expect(error.code).toBe('sign_in_required');
      expect(error.message).toContain('a bearer credential alone');
    }
  });

  it('account targets: support may not touch staff accounts; nobody disables, re-roles or re-packages themselves', () => {
    const support = actor('support');
    const admin = actor('admin');
    const member = { type: 'account' as const, id: 'someone', role: 'member' as const };
    const otherAdmin = { type: 'account' as const, id: 'other-admin', role: 'admin' as const };
    expect(authz.can(support, 'account:disable', member)).toBe(true);
    expect(denial(() => authz.assert(support, 'account:disable', otherAdmin)).message).toContain('Only an admin may act on a staff account');
    expect(authz.can(admin, 'account:disable', otherAdmin)).toBe(true);
    for (const action of ['account:disable', 'staff:set-role', 'account:set-package'] as const) {
      const self = { type: 'account' as const, id: admin.accountId, role: 'admin' as const };
      expect(denial(() => authz.assert(admin, action, self)).message).toContain('your own account');
    }
    expect(authz.can(admin, 'session:end-any', { type: 'account', id: admin.accountId, role: 'admin' })).toBe(true);
  });

  it('staff never decide on themselves: their application, their account, an organisation they belong to — and the refusal says which', () => {
    const support = actor('support');
    const own = denial(() => authz.assert(support, 'application:review', { type: 'application', id: 'app-1', applicantId: support.accountId }));
    expect(own.status).toBe(403);
    expect(own.message).toContain('You submitted application app-1');
    expect(authz.selfDecisionOf(own)).toBe('own_application');
    expect(authz.can(support, 'application:review', { type: 'application', id: 'app-2', applicantId: 'someone-else' })).toBe(true);
    const organisation = (membership: 'member' | 'admin' | 'owner' | null) => ({ type: 'account' as const, id: 'org-1', role: 'member' as const, membership });
    for (const membership of ['member', 'admin', 'owner'] as const) {
      const error = denial(() => authz.assert(support, 'account:set-package', organisation(membership)));
      expect(error.message).toContain(`an organisation you belong to (you are its ${membership})`);
      expect(authz.selfDecisionOf(error)).toBe('own_organisation');
    }
    expect(authz.can(support, 'account:set-package', organisation(null))).toBe(true);
    expect(authz.selfDecisionOf(denial(() => authz.assert(support, 'account:set-package', { type: 'account', id: support.accountId, role: 'support' })))).toBe('own_account');
    // Other refusals are not decisions on themselves.
    expect(authz.selfDecisionOf(denial(() => authz.assert(actor('member'), 'application:review')))).toBeNull();
  });

  it('organisation actions follow the membership role passed in; staff roles give nothing there', () => {
    const org = (membership: 'member' | 'admin' | 'owner' | null) => ({ type: 'organisation' as const, id: 'org-1', membership });
    const member = actor('member');
    expect(authz.can(member, 'organisation:read', org('member'))).toBe(true);
    expect(authz.can(member, 'organisation:keys:create', org('member'))).toBe(false);
    expect(authz.can(member, 'organisation:keys:create', org('admin'))).toBe(true);
    expect(authz.can(member, 'organisation:members:manage', org('admin'))).toBe(false);
    expect(authz.can(member, 'organisation:members:manage', org('owner'))).toBe(true);
    // Paying for an organisation: its owner and admins, from a web session.
    expect(authz.can(member, 'organisation:billing:manage', org('member'))).toBe(false);
    expect(authz.can(member, 'organisation:billing:manage', org('admin'))).toBe(true);
    expect(authz.can(member, 'organisation:billing:read', org('owner'))).toBe(true);
    expect(denial(() => authz.assert(actor('member', 'api_key'), 'organisation:billing:manage', org('owner'))).code).toBe('sign_in_required');
    expect(denial(() => authz.assert(actor('admin'), 'organisation:read', org(null))).message).toContain('not a member of organisation org-1');
    // Reading an organisation works with a key; minting its keys needs the browser.
    expect(authz.can(actor('member', 'api_key'), 'organisation:read', org('owner'))).toBe(true);
    expect(denial(() => authz.assert(actor('member', 'api_key'), 'organisation:keys:create', org('owner'))).code).toBe('sign_in_required');
  });
});
