/**
 * Who pays a checkout, and whose orders and subscription a caller may see (DESIGN §8.1, §8.6). A member
 * pays for their own account; an organisation's owner or admin may name the organisation as the payer —
 * its order, notices and subscription then work exactly as a member's, on the organisation's account.
 *
 * The caller's role comes from `authz.OrganisationRoleLookup` and is decided by the authz table
 * (`organisation:billing:read`, `organisation:billing:manage`): a plain member of the organisation gets
 * 403, someone outside it 404 (an organisation's existence is not theirs to learn).
 */
import * as authz from '../../authz/authz.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { Principal } from '../../authz/principal.ts';

export type PayerAccess = 'read' | 'manage';

const personal = { read: 'billing:read', manage: 'billing:manage' } as const;
const organisational = { read: 'organisation:billing:read', manage: 'organisation:billing:manage' } as const;

export class BillingPayers {
  readonly #roles: authz.OrganisationRoleLookup;

  constructor(roles: authz.OrganisationRoleLookup) {
    this.#roles = roles;
  }

  /**
   * The account that pays (or whose billing is read): the caller's own, or `organisationId` when the
   * caller may `access` that organisation's billing.
   */
  async resolve(actor: authz.Actor, organisationId: string | null | undefined, access: PayerAccess): Promise<{ actor: Principal; payerId: string }> {
    authz.assert(actor, personal[access]);
    if (organisationId === null || organisationId === undefined || organisationId === '') return { actor, payerId: actor.accountId };
    const role = typeof organisationId === 'string' ? await this.#roles.roleOf(actor.accountId, organisationId) : null;
    if (role === null) {
      throw new AppError('not_found', bilingual('No organisation {id} that you belong to.', '没有您所属的组织 {id}。', { id: String(organisationId).slice(0, 64) }), { param: 'organisationId' });
    }
    authz.assert(actor, organisational[access], { type: 'organisation', id: organisationId, membership: role });
    return { actor, payerId: organisationId };
  }

  /** Whether the caller may `access` the billing of `accountId`: their own, or an organisation's as its owner or admin. */
  async may(actor: authz.Actor, accountId: string, access: PayerAccess): Promise<boolean> {
    if (!authz.can(actor, personal[access])) return false;
    if (actor!.accountId === accountId) return true;
    const role = await this.#roles.roleOf(actor!.accountId, accountId);
    return role !== null && authz.can(actor, organisational[access], { type: 'organisation', id: accountId, membership: role });
  }
}
