/**
 * One question other modules ask about organisations: what role an account has in one. Billing asks it
 * before an owner or admin pays for their organisation; staff changes ask it so staff never act on an
 * organisation they belong to. They receive it as `authz.OrganisationRoleLookup`, so none of them imports
 * the enterprise module.
 */
import type { OrganisationRole } from '../../authz/actions.ts';
import type { OrganisationRoleLookup } from '../../authz/authz.ts';
import type { Database } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';

export class OrganisationRoles implements OrganisationRoleLookup {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async roleOf(accountId: string, organisationId: string): Promise<OrganisationRole | null> {
    if (!isUuid(accountId) || !isUuid(organisationId)) return null;
    const row = await this.#db.orm.em
      .getConnection()
      .execute<{ role: OrganisationRole }>(`select "role" from "organisation_member" where "organisation_id" = ? and "account_id" = ?`, [organisationId, accountId], 'get');
    return (row as { role?: OrganisationRole } | undefined)?.role ?? null;
  }
}
