/**
 * Staff never decide on themselves (SECURITY "Hardening", DESIGN §8.1): not on an application they
 * submitted, not on their own account, not on an organisation they belong to. authz refuses those with 403;
 * `assertAudited` is `authz.assert` that, when it refuses such a decision, first appends the attempt to the
 * audit log as `<attempt>:denied` — a refused self-approval is exactly what a reviewer wants to find later.
 */
import * as authz from '../../authz/authz.ts';
import type { Action } from '../../authz/actions.ts';
import type { Principal } from '../../authz/principal.ts';
import type { AuditLog, AuditTargetType } from './audit.service.ts';
import type { AuditAction } from './audit.vocabulary.ts';

/** What the actor tried: the audit action the change would have been recorded under, and its target. */
export interface Attempt {
  action: AuditAction;
  targetType: AuditTargetType;
  targetId: string;
  requestId?: string | null;
}

/** `authz.assert(actor, action, resource)`; a refused decision on themselves is audited before the 403. */
export async function assertAudited<A extends Action>(audit: AuditLog, attempt: Attempt, actor: authz.Actor, action: A, ...resource: authz.ResourceArgs<A>): Promise<Principal> {
  try {
    authz.assert(actor, action, ...resource);
    return actor;
  } catch (error) {
    const denied = authz.selfDecisionOf(error);
    if (denied && actor) {
      await audit.record({
        actorId: actor.accountId,
        action: `${attempt.action}:denied`,
        targetType: attempt.targetType,
        targetId: attempt.targetId,
        before: null,
        after: { denied },
        reason: (error as Error).message.slice(0, 500),
        requestId: attempt.requestId ?? null,
      });
    }
    throw error;
  }
}
