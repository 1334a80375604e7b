/**
 * Organisation keys (`svc_ent_`, DESIGN §8.1): the same rules as personal keys (api-key.mint.ts), billed to
 * the organisation, optionally held to an IP allow-list. Members see them (prefix and last 4); the owner
 * and admins mint them from a web session and revoke them; staff who are not members revoke with a reason,
 * audited. How a key is let in on each request is identity's (resolvers/enterprise-key.resolver.ts).
 */
import * as authz from '../../authz/authz.ts';
import type { Database, Em } from '../../db/orm.ts';
import { isUuid } from '../../db/ids.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { parseCidrs } from '../../infra/cidr.ts';
import { ApiKey, type IApiKey } from '../api-key/api-key.entity.ts';
import { keyName, mintKey } from '../api-key/api-key.mint.ts';
import { checkBudgets, type KeyLimitPolicy, type KeyLimitsInput, type KeyLimitsView } from '../api-key/key-limits.ts';
import { Account } from '../account/account.entity.ts';
import type { AuditLog } from '../audit/audit.service.ts';
import { checkReason } from '../audit/reason.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import { signedIn } from './enterprise.errors.ts';
import type { Organisations } from './organisation.service.ts';

export interface OrganisationKeyView {
  id: string;
  organisationId: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  allowedCidrs: string[];
  createdBy: string | null;
  /** The key's own limits and its spend today and this month (issue 51). */
  limits: KeyLimitsView;
}

export interface CreatedOrganisationKey {
  key: OrganisationKeyView;
  /** The full token, shown once. */
  token: string;
}

export const maxKeysPerOrganisation = 100;

interface Deps {
  organisations: Organisations;
  identity: IdentityService;
  audit: AuditLog;
  limits: KeyLimitPolicy;
}

export class OrganisationKeys {
  readonly #db: Database;
  readonly #deps: Deps;

  constructor(db: Database, deps: Deps) {
    this.#db = db;
    this.#deps = deps;
  }

  /** The organisation's live keys, newest first. */
  async list(actor: authz.Actor, organisationId: string): Promise<OrganisationKeyView[]> {
    await this.#deps.organisations.access(actor, organisationId, 'organisation:read');
    const rows = await this.#db.orm.em.fork().find(ApiKey, { accountId: organisationId, kind: 'enterprise', revokedAt: null }, { orderBy: { createdAt: 'desc', id: 'asc' } });
    return this.#views(rows);
  }

  async #views(rows: IApiKey[]): Promise<OrganisationKeyView[]> {
    const limits = await this.#deps.limits.views(rows);
    return rows.map((row) => keyView(row, limits.get(row.id)!));
  }

  /**
   * Changes an organisation key's name or limits (owner and admins; fields absent stay, null lifts a limit);
   * every instance drops it from its credential cache.
   */
  async update(actor: authz.Actor, organisationId: string, keyId: string, input: { name?: unknown } & KeyLimitsInput): Promise<OrganisationKeyView> {
    await this.#deps.organisations.access(actor, organisationId, 'organisation:keys:create');
    const em = this.#db.orm.em.fork();
    const key = isUuid(keyId) ? await em.findOne(ApiKey, { id: keyId, accountId: organisationId, kind: 'enterprise', revokedAt: null }) : null;
    if (!key) throw new AppError('not_found', bilingual('No live organisation key {id} in this organisation.', '该组织中没有有效的组织密钥 {id}。', { id: keyId.slice(0, 64) }), { param: 'id' });
    const organisation = await em.findOneOrFail(Account, { id: organisationId });
    const columns = this.#deps.limits.parse(input, organisation.planPackage);
    if (input.name !== undefined) key.name = keyName(input.name);
    em.assign(key, columns);
    checkBudgets(key);
    await em.flush();
    await this.#deps.identity.invalidate({ tokenHashes: [key.tokenHash] });
    return (await this.#views([key]))[0]!;
  }

  /** Mints an organisation key (owner and admins, from a web session). The token is returned this once. */
  async create(actor: authz.Actor, organisationId: string, input: { name: unknown; allowedCidrs?: readonly unknown[] | null } & KeyLimitsInput): Promise<CreatedOrganisationKey> {
    await this.#deps.organisations.access(actor, organisationId, 'organisation:keys:create');
    const name = keyName(input.name);
    const allowedCidrs = parseCidrs(input.allowedCidrs);
    const em = this.#db.orm.em.fork();
    const organisation = await em.findOneOrFail(Account, { id: organisationId });
    const columns = this.#deps.limits.parse(input, organisation.planPackage);
    checkBudgets(columns);
    const live = await em.count(ApiKey, { accountId: organisationId, kind: 'enterprise', revokedAt: null });
    if (live >= maxKeysPerOrganisation) {
      throw new AppError('invalid_request', bilingual('An organisation can have at most {max} live keys; revoke one first.', '每个组织最多只能有 {max} 个有效密钥，请先撤销一个。', { max: maxKeysPerOrganisation }));
    }
    const { key, token } = mintKey(em, 'enterprise', { accountId: organisationId, name, allowedCidrs, createdBy: actor!.accountId, ...columns });
    await em.flush();
    return { key: (await this.#views([key]))[0]!, token };
  }

  /**
   * Revokes an organisation key; it stops working at once on every instance. The organisation's owner and
   * admins need no reason; staff who are not members (`api-key:revoke-any`) must give one, and are audited.
   */
  async revoke(actor: authz.Actor, keyId: string, organisationId?: string | null, options: { reason?: string | null; requestId?: string | null } = {}): Promise<OrganisationKeyView> {
    signedIn(actor);
    const em = this.#db.orm.em.fork();
    const key = isUuid(keyId) ? await em.findOne(ApiKey, { id: keyId, kind: 'enterprise', revokedAt: null }) : null;
    const missing = () => new AppError('not_found', bilingual('No live organisation key {id} in your organisations.', '您的组织中没有有效的组织密钥 {id}。', { id: keyId.slice(0, 64) }), { param: 'id' });
    if (!key || (organisationId && key.accountId !== organisationId)) throw missing();
    let byStaff = false;
    try {
      await this.#deps.organisations.access(actor, key.accountId, 'organisation:keys:revoke');
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'not_found')) throw error;
      if (!authz.can(actor, 'api-key:revoke-any', { type: 'account', id: key.accountId, role: 'member' })) throw missing();
      byStaff = true;
    }
    if (!byStaff) {
      key.revokedAt = new Date();
      await em.flush();
    } else {
      await this.#revokeAsStaff(em, key, actor.accountId, { reason: checkReason(options.reason), requestId: options.requestId ?? null });
    }
    await this.#deps.identity.invalidate({ tokenHashes: [key.tokenHash] });
    return (await this.#views([key]))[0]!;
  }

  /** Staff's revocation: the key and its audit record in one transaction. */
  async #revokeAsStaff(em: Em, key: IApiKey, actorId: string, why: { reason: string; requestId: string | null }): Promise<void> {
    await em.transactional(async (tx) => {
      const row = await tx.findOneOrFail(ApiKey, { id: key.id });
      row.revokedAt = new Date();
      key.revokedAt = row.revokedAt;
      await tx.flush();
      await this.#deps.audit.record(
        {
          actorId,
          action: 'api-key:revoke-any',
          targetType: 'api_key',
          targetId: row.id,
          before: { accountId: row.accountId, kind: 'enterprise', name: row.name, prefix: row.prefix, last4: row.last4, revokedAt: null },
          after: { revokedAt: row.revokedAt.toISOString() },
          reason: why.reason,
          requestId: why.requestId,
        },
        tx,
      );
    });
  }
}

function keyView(key: IApiKey, limits: KeyLimitsView): OrganisationKeyView {
  return {
    id: key.id,
    organisationId: key.accountId,
    name: key.name,
    prefix: key.prefix,
    last4: key.last4,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt ?? null,
    allowedCidrs: key.allowedCidrs ?? [],
    createdBy: key.createdBy ?? null,
    limits,
  };
}
