/**
 * Personal API keys (spec §4, DESIGN "Credentials"): `svc_live_` + 256 random bits, shown once at creation,
 * stored as SHA-256 only; lists show `prefix` (first 12 characters) and `last4`. Managing your keys needs a
 * web session (authz `api-key:manage`): a key or a device token cannot mint more keys. Staff may revoke
 * anyone's key with a reason (`api-key:revoke-any`, audited).
 */
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import * as authz from '../../authz/authz.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import { isUuid } from '../../db/ids.ts';
import { entityManager } from '../../db/unit-of-work.ts';
import { Account } from '../account/account.entity.ts';
import type { AuditLog } from '../audit/audit.service.ts';
import { optionalReason } from '../audit/reason.ts';
import { ApiKey, type IApiKey } from './api-key.entity.ts';
import { keyName, mintKey } from './api-key.mint.ts';
import { checkBudgets, type KeyLimitPolicy, type KeyLimitsInput, type KeyLimitsView } from './key-limits.ts';

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** The key's own limits and its spend today and this month (issue 51). */
  limits: KeyLimitsView;
}

export interface CreatedApiKey {
  key: ApiKeyView;
  /** The full token: returned this once, never stored. */
  token: string;
}

export const maxKeysPerAccount = 100;

export class ApiKeyService {
  readonly #db: Database;
  readonly #identity: IdentityService;
  readonly #audit: AuditLog;
  readonly #limits: KeyLimitPolicy;

  constructor(db: Database, identity: IdentityService, audit: AuditLog, limits: KeyLimitPolicy) {
    this.#db = db;
    this.#identity = identity;
    this.#audit = audit;
    this.#limits = limits;
  }

  /** The caller's live personal keys, newest first. */
  async list(actor: authz.Actor): Promise<ApiKeyView[]> {
    authz.assert(actor, 'api-key:manage');
    return this.listForAccount(actor.accountId);
  }

  async listForAccount(accountId: string): Promise<ApiKeyView[]> {
    const rows = await entityManager(this.#db).find(ApiKey, { accountId, kind: 'personal', revokedAt: null }, { orderBy: { createdAt: 'desc', id: 'asc' } });
    return this.#views(rows);
  }

  async #views(rows: IApiKey[]): Promise<ApiKeyView[]> {
    const limits = await this.#limits.views(rows);
    return rows.map((row) => view(row, limits.get(row.id)!));
  }

  /** Mints a key for the signed-in caller (web session required), with the limits `input` sets. */
  async create(actor: authz.Actor, input: { name: string } & KeyLimitsInput): Promise<CreatedApiKey> {
    authz.assert(actor, 'api-key:manage');
    return this.createForAccount(actor.accountId, input);
  }

  /**
   * Changes a key's name or limits (fields absent stay as they are; null lifts a limit). Every instance
   * drops the key from its credential cache, so the next request is admitted under the new limits.
   */
  async update(actor: authz.Actor, keyId: string, input: { name?: unknown } & KeyLimitsInput): Promise<ApiKeyView> {
    authz.assert(actor, 'api-key:manage');
    const em = entityManager(this.#db);
    const key = isUuid(keyId) ? await em.findOne(ApiKey, { id: keyId, accountId: actor.accountId, kind: 'personal', revokedAt: null }) : null;
    if (!key) {
      throw new AppError('not_found', isUuid(keyId) ? bilingual('No live API key {id} on your account.', '您的账户中没有有效的 API 密钥 {id}。', { id: keyId }) : bilingual('That is not an API key id.', '这不是 API 密钥的 ID。'), {
        param: 'id',
      });
    }
    const owner = await em.findOneOrFail(Account, { id: actor.accountId });
    const columns = this.#limits.parse(input, owner.planPackage);
    if (input.name !== undefined) key.name = keyName(input.name);
    em.assign(key, columns);
    checkBudgets(key);
    await em.flush();
    await this.#identity.invalidate({ tokenHashes: [key.tokenHash] });
    const [updated] = await this.#views([key]);
    return updated!;
  }

  /**
   * Mints a key for an account without a caller check: for trusted callers that have already authorised
   * (the admin CLI, tests, seed scripts). Transports use `create`.
   */
  async createForAccount(accountId: string, input: { name: string } & KeyLimitsInput): Promise<CreatedApiKey> {
    const name = keyName(input.name);
    const em = entityManager(this.#db);
    const owner = await em.findOneOrFail(Account, { id: accountId });
    const columns = this.#limits.parse(input, owner.planPackage);
    checkBudgets(columns);
    const live = await em.count(ApiKey, { accountId, kind: 'personal', revokedAt: null });
    if (live >= maxKeysPerAccount) {
      throw new AppError(
        'invalid_request',
        bilingual('An account can have at most {max} live keys; revoke one first.', '每个账户最多只能有 {max} 个有效密钥，请先撤销一个。', { max: maxKeysPerAccount }),
      );
    }
    const { key, token } = mintKey(em, 'personal', { accountId, name, ...columns });
    await em.flush();
    const [created] = await this.#views([key]);
    return { key: created!, token };
  }

  /**
   * Revokes a key; it stops working on every instance at once. Your own key: no reason needed. Another
   * account's key: staff only (`api-key:revoke-any`, 403 for anyone else), with a reason, audited. Key ids
   * are random UUIDs never shown to other members, so the 403 tells a member nothing they could use.
   */
  async revoke(actor: authz.Actor, keyId: string, options: { reason?: string | null; requestId?: string | null } = {}): Promise<ApiKeyView> {
    authz.assert(actor, 'api-key:manage');
    const em = entityManager(this.#db);
    const key = isUuid(keyId) ? await em.findOne(ApiKey, { id: keyId, kind: 'personal', revokedAt: null }) : null;
    const missing = () => new AppError('not_found', isUuid(keyId) ? `No live API key ${keyId} on your account.` : 'That is not an API key id.', { param: 'id' });
    if (!key) throw missing();
    if (key.accountId === actor.accountId) return this.revokeForAccount(actor.accountId, keyId);
    authz.assert(actor, 'api-key:revoke-any');
    const owner = await em.findOneOrFail(Account, { id: key.accountId });
    authz.assert(actor, 'api-key:revoke-any', { type: 'account', id: owner.id, role: owner.role });
    const reason = optionalReason(options.reason);
    if (!reason) throw new AppError('invalid_request', "reason is required to revoke another account's key (it goes into the audit log).", { param: 'reason' });
    const revoked = await this.#db.orm.em.fork().transactional(async (tx) => {
      const row = await tx.findOne(ApiKey, { id: key.id, revokedAt: null });
      if (!row) return null;
      row.revokedAt = new Date();
      await tx.flush();
      await this.#audit.record(
        {
          actorId: actor.accountId,
          action: 'api-key:revoke-any',
          targetType: 'api_key',
          targetId: row.id,
          before: { accountId: row.accountId, name: row.name, prefix: row.prefix, last4: row.last4, revokedAt: null },
          after: { revokedAt: row.revokedAt.toISOString() },
          reason,
          requestId: options.requestId ?? null,
        },
        tx,
      );
      return row;
    });
    if (!revoked) throw missing();
    await this.#identity.invalidate({ tokenHashes: [revoked.tokenHash] });
    return (await this.#views([revoked]))[0]!;
  }

  /** Revokes a key of the given account without a caller check (trusted callers; transports use `revoke`). */
  async revokeForAccount(accountId: string, keyId: string): Promise<ApiKeyView> {
    const em = entityManager(this.#db);
    const key = isUuid(keyId) ? await em.findOne(ApiKey, { id: keyId, accountId, kind: 'personal', revokedAt: null }) : null;
    if (!key) {
      const message = isUuid(keyId)
        ? bilingual('No live API key {id} on your account.', '您的账户中没有有效的 API 密钥 {id}。', { id: keyId })
        : bilingual('That is not an API key id.', '这不是 API 密钥的 ID。');
      throw new AppError('not_found', message, { param: 'id' });
    }
    key.revokedAt = new Date();
    await em.flush();
    await this.#identity.invalidate({ tokenHashes: [key.tokenHash] });
    return (await this.#views([key]))[0]!;
  }
}

function view(key: IApiKey, limits: KeyLimitsView): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    last4: key.last4,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt ?? null,
    limits,
  };
}
