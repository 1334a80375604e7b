/**
 * The enterprise module's refusals, shared by its services: who must be signed in (and how), and the
 * errors more than one of them raises. Someone outside an organisation gets `organisationNotFound` for it,
 * whatever the id: its existence is not theirs to learn.
 */
import type * as authz from '../../authz/authz.ts';
import { AppError, bilingual, type Bilingual } from '../../errors/app-error.ts';
import type { ApplicationState, IEnterpriseApplication } from './enterprise.entity.ts';

export function signedIn(actor: authz.Actor): asserts actor is NonNullable<authz.Actor> {
  if (!actor) throw new AppError('sign_in_required', bilingual('Sign in required: no valid web session or bearer credential.', '请先登录：没有有效的网页会话或 Bearer 凭证。'));
}

/** Applications come from people signed in at the web app (not from keys). */
export function signedInPerson(actor: authz.Actor): asserts actor is NonNullable<authz.Actor> {
  signedIn(actor);
  if (actor.credential.kind !== 'web_session') {
    throw new AppError(
      'sign_in_required',
      bilingual('This needs a web session: sign in at /enterprise/apply in a browser; a bearer credential alone is not accepted.', '此操作需要网页会话：请在浏览器中打开 /enterprise/apply 登录；仅凭 Bearer 凭证不能执行。'),
    );
  }
}

export function organisationNotFound(id: string): AppError {
  return new AppError('not_found', bilingual('No organisation {id} that you belong to.', '没有您所属的组织 {id}。', { id: String(id).slice(0, 64) }), { param: 'organisationId' });
}

export function applicationNotFound(id: string): AppError {
  return new AppError('not_found', bilingual('No application {id}.', '没有申请 {id}。', { id: String(id).slice(0, 64) }), { param: 'id' });
}

export function memberNotFound(id: string): AppError {
  return new AppError('not_found', bilingual('No member or invitation {id} in this organisation.', '该组织中没有成员或邀请 {id}。', { id: String(id).slice(0, 64) }), { param: 'accountId' });
}

export function organisationNameTaken(param: string): AppError {
  return new AppError('conflict', bilingual('An organisation with this name already exists on svc; choose another name.', 'svc 上已有同名组织，请换一个名称。'), { param });
}

const stateWords: Record<ApplicationState, Bilingual> = {
  pending_review: { en: 'pending review', zh: '待审核' },
  approved: { en: 'approved', zh: '已批准' },
  rejected: { en: 'rejected', zh: '已拒绝' },
  withdrawn: { en: 'withdrawn', zh: '已撤回' },
};

export function notPending(row: IEnterpriseApplication): AppError {
  return new AppError('conflict', bilingual('Application {id} is already {state}; only a pending application can change.', '申请 {id} 已是“{state}”状态，只有待审核的申请可以更改。', { id: row.id, state: stateWords[row.state] }), {
    details: { state: row.state },
  });
}

/** A unique index that refused a racing insert (open application, organisation name) as a 409. */
export function uniqueToConflict(error: unknown): unknown {
  const text = error instanceof Error ? `${error.message} ${(error as { constraint?: string }).constraint ?? ''}` : '';
  if (text.includes('enterprise_application_open_account')) {
    return new AppError('conflict', bilingual('You already have an application waiting for review; withdraw it before submitting another.', '您已有一份待审核的申请，请先撤回再提交新的申请。'));
  }
  if (text.includes('enterprise_application_open_name')) {
    return new AppError('conflict', bilingual('An application for an organisation with this name is already waiting for review.', '已有同名组织的申请在等待审核。'), { param: 'organisation' });
  }
  if (text.includes('organisation_name_key_unique')) return organisationNameTaken('organisation');
  return error;
}
