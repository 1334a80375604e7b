/**
 * Who may do what, decided in one place from the table in `actions.ts`. Services open with
 *
 *   authz.assert(actor, 'account:disable', { type: 'account', id, role });   // throws, or narrows actor to Principal
 *
 * and GraphQL `viewerCan…` fields ask `authz.can(...)` instead of re-deriving rights. The actor is the
 * request's `Principal` (null when nobody is signed in).
 *
 * Answers: no actor → 401 `sign_in_required`; the wrong role, membership or target → 403 `forbidden` with a
 * message naming the rule; a bearer credential where the action needs the browser's web session → 401
 * `sign_in_required` (signing in at the web app is exactly what fixes it).
 */
import { AppError, bilingual, type Bilingual } from '../errors/app-error.ts';
import type { AccountRole } from './principal.ts';
import type { Principal } from './principal.ts';
import {
  actions,
  notOnSelf,
  organisationRank,
  staffRank,
  type AccountTargetedAction,
  type Action,
  type OrganisationAction,
  type OrganisationRole,
  type SelfDecision,
} from './actions.ts';

export type { Action, SelfDecision } from './actions.ts';

/** Who is acting: the request's principal, or null when not signed in. */
export type Actor = Principal | null;

/** The account a staff action is aimed at (its role decides whether support may touch it). */
export interface AccountResource {
  type: 'account';
  id: string;
  role: AccountRole;
  /**
   * When the account is an organisation: the actor's role in it (null or absent: not a member). Staff
   * never act on an organisation they belong to (`notOnSelf`); the caller looks the membership up.
   */
  membership?: OrganisationRole | null;
}

/**
 * Where services that act on an account learn the actor's role in an organisation (for `membership`
 * above, and for organisation billing). The enterprise module implements it; authz itself never queries.
 */
export interface OrganisationRoleLookup {
  /** The account's role in the organisation; null when it is not a member (or the id is no organisation). */
  roleOf(accountId: string, organisationId: string): Promise<OrganisationRole | null>;
}

/** The application a review decision is about: staff never decide on one they submitted. */
export interface ApplicationResource {
  type: 'application';
  id: string;
  applicantId: string;
}

/**
 * The organisation an action is aimed at, with the actor's membership role in it (null when not a member).
 * The enterprise module looks the membership up and passes it in; authz never queries.
 */
export interface OrganisationResource {
  type: 'organisation';
  id: string;
  membership: OrganisationRole | null;
}

/** What each action takes as its resource: organisations must name one; account actions may name their target. */
export type ResourceArgs<A extends Action> = A extends OrganisationAction
  ? [resource: OrganisationResource]
  : A extends AccountTargetedAction
    ? [resource?: AccountResource]
    : A extends 'application:review'
      ? [resource?: ApplicationResource]
      : [];

/** Throws unless `actor` may do `action` (to `resource`); afterwards `actor` is known to be signed in. */
export function assert<A extends Action>(actor: Actor, action: A, ...resource: ResourceArgs<A>): asserts actor is Principal {
  const denial = decide(actor, action, resource[0]);
  if (denial) throw denial;
}

/** Whether `actor` may do `action` (to `resource`): `assert` without the throw. */
export function can<A extends Action>(actor: Actor, action: A, ...resource: ResourceArgs<A>): boolean {
  return decide(actor, action, resource[0]) === null;
}

/** Which decision-on-themselves an error from `assert` refused, or null when it refused something else. */
export function selfDecisionOf(error: unknown): SelfDecision | null {
  return error instanceof AppError && error.code === 'forbidden' ? ((error.options.details?.selfDecision as SelfDecision | undefined) ?? null) : null;
}

function decide(actor: Actor, action: Action, resource: AccountResource | OrganisationResource | ApplicationResource | undefined): AppError | null {
  const rule = actions[action];
  if (!actor) {
    return new AppError('sign_in_required', bilingual('Sign in required ({action}): no valid web session or bearer credential.', '请先登录（{action}）：没有有效的网页会话或 Bearer 凭证。', { action }));
  }
  switch (rule.who) {
    case 'self':
      break;
    case 'staff': {
      if (staffRank[actor.role] < staffRank[rule.role]) {
        const who = rule.role === 'admin' ? { en: 'admins', zh: '管理员' } : { en: 'support staff and admins', zh: '客服和管理员' };
        return forbidden(bilingual("{action} is for {who}; this account's role is {role}.", '{action} 仅限{who}使用；当前账户的角色是{role}。', { action, who, role: roleWord(actor.role) }));
      }
      if (resource?.type === 'application' && resource.applicantId === actor.accountId) {
        return forbidden(
          bilingual('You submitted application {id}, so you cannot decide on it; another staff member must review it.', '申请 {id} 是您提交的，您不能审核它；请由其他工作人员审核。', { id: resource.id }),
          'own_application',
        );
      }
      if (resource?.type === 'account') {
        if (resource.id === actor.accountId && notOnSelf.has(action)) {
          return forbidden(bilingual('{action} cannot be applied to your own account; ask another staff member.', '{action} 不能用于您自己的账户，请让其他工作人员操作。', { action }), 'own_account');
        }
        if (resource.membership && notOnSelf.has(action)) {
          return forbidden(
            bilingual(
              '{action} cannot be applied to an organisation you belong to (you are its {role}); ask another staff member.',
              '{action} 不能用于您所属的组织（您是其{role}），请让其他工作人员操作。',
              { action, role: organisationRoleWord(resource.membership) },
            ),
            'own_organisation',
          );
        }
        if (resource.role !== 'member' && actor.role !== 'admin') {
          return forbidden(
            bilingual('Only an admin may act on a staff account ({action} on an account with role {role}).', '只有管理员可以操作工作人员账户（对角色为{role}的账户执行 {action}）。', {
              action,
              role: roleWord(resource.role),
            }),
          );
        }
      }
      break;
    }
    case 'organisation': {
      if (resource?.type !== 'organisation') throw new Error(`authz: ${action} needs the organisation as its resource`);
      if (resource.membership === null) return forbidden(bilingual('You are not a member of organisation {id}.', '您不是组织 {id} 的成员。', { id: resource.id }));
      if (organisationRank[resource.membership] < organisationRank[rule.role]) {
        return forbidden(
          bilingual('{action} needs the organisation role {needed} or higher; yours is {yours}.', '{action} 需要组织角色 {needed} 或更高；您的角色是 {yours}。', { action, needed: rule.role, yours: resource.membership }),
        );
      }
      break;
    }
    default:
      return assertNever(rule);
  }
  const kind = actor.credential.kind;
  if (rule.webSession && kind !== 'web_session' && !(rule.webSession === 'or-device' && kind === 'session_token')) {
    const where = rule.who === 'staff' ? '/admin' : '/account';
    return new AppError(
      'sign_in_required',
      bilingual(
        'This needs a web session ({action}): sign in at {where} in a browser; a bearer credential alone (API key or device-login token) is not accepted.',
        '此操作需要网页会话（{action}）：请在浏览器中打开 {where} 登录；仅凭 Bearer 凭证（API 密钥或设备登录令牌）不能执行。',
        { action, where },
      ),
    );
  }
  return null;
}

function forbidden(message: Bilingual, selfDecision?: SelfDecision): AppError {
  return new AppError('forbidden', { en: `Forbidden: ${message.en}`, zh: `无权操作：${message.zh}` }, { stage: 'auth', ...(selfDecision ? { details: { selfDecision } } : {}) });
}

function organisationRoleWord(role: OrganisationRole): Bilingual {
  return { en: role, zh: { member: '成员', admin: '管理员', owner: '所有者' }[role] };
}

/** An account role in a sentence: the code in English (as the API spells it), the word in Chinese. */
function roleWord(role: AccountRole): Bilingual {
  return { en: role, zh: { member: '会员', support: '客服', admin: '管理员' }[role] };
}

function assertNever(value: never): never {
  throw new Error(`authz: unknown rule ${JSON.stringify(value)}`);
}
