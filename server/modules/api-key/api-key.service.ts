/**
 * Personal API keys (spec §4, DESIGN "Credentials"): `svc_live_` + 256 random bits, shown once at creation,
 * stored as SHA-256 only; lists show `prefix` (first 12 characters) and `last4`. Managing keys needs a web
 * session: a key or a device token cannot mint more keys.
 */
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import type { Principal } from '../identity/principal.ts';
import { displayParts, newToken, sha256Hex, tokenPrefixes } from '../identity/credential-token.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import { isUuid } from '../../db/ids.ts';
import { entityManager } from '../../db/unit-of-work.ts';
import { ApiKey, type IApiKey } from './api-key.entity.ts';

export interface ApiKeyView {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: Date;
  lastUsedAt: Date | null;
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

  constructor(db: Database, identity: IdentityService) {
    this.#db = db;
    this.#identity = identity;
  }

  /** The caller's live personal keys, newest first. */
  async list(principal: Principal): Promise<ApiKeyView[]> {
    assertWebSession(principal);
    return this.listForAccount(principal.accountId);
  }

  async listForAccount(accountId: string): Promise<ApiKeyView[]> {
    const rows = await entityManager(this.#db).find(ApiKey, { accountId, kind: 'personal', revokedAt: null }, { orderBy: { createdAt: 'desc', id: 'asc' } });
    return rows.map(view);
  }

  /** Mints a key for the signed-in caller (web session required). */
  async create(principal: Principal, input: { name: string }): Promise<CreatedApiKey> {
    assertWebSession(principal);
    return this.createForAccount(principal.accountId, input);
  }

  /**
   * Mints a key for an account without a caller check: for trusted callers that have already authorised
   * (the admin CLI, tests, seed scripts). Transports use `create`.
   */
  async createForAccount(accountId: string, input: { name: string }): Promise<CreatedApiKey> {
    const name = input.name.trim();
    if (name.length === 0 || name.length > 100) {
      throw new AppError('invalid_request', bilingual('name must be 1 to 100 characters.', '名称长度须为 1 到 100 个字符。'), { param: 'name' });
    }
    if (/[\p{Cc}\p{Cf}]/u.test(name)) throw new AppError('invalid_request', bilingual('name must not contain control characters.', '名称不能包含控制字符。'), { param: 'name' });
    const em = entityManager(this.#db);
    const live = await em.count(ApiKey, { accountId, kind: 'personal', revokedAt: null });
    if (live >= maxKeysPerAccount) {
      throw new AppError(
        'invalid_request',
        bilingual('An account can have at most {max} live keys; revoke one first.', '每个账户最多只能有 {max} 个有效密钥，请先撤销一个。', { max: maxKeysPerAccount }),
      );
    }
    const token = newToken(tokenPrefixes.personalKey);
    const key = em.create(ApiKey, {
      accountId,
      kind: 'personal',
      name,
      tokenHash: sha256Hex(token),
      ...displayParts(token),
      lastUsedAt: null,
      revokedAt: null,
    });
    await em.flush();
    return { key: view(key), token };
  }

  /** Revokes one of the caller's keys; it stops working on every instance at once. */
  async revoke(principal: Principal, keyId: string): Promise<ApiKeyView> {
    assertWebSession(principal);
    return this.revokeForAccount(principal.accountId, keyId);
  }

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
    return view(key);
  }
}

function assertWebSession(principal: Principal): void {
  if (principal.credential.kind !== 'web_session') {
    throw new AppError(
      'sign_in_required',
      bilingual(
        'Managing API keys needs a web session: sign in at /account (a bearer credential is not enough).',
        '管理 API 密钥需要网页登录：请在 /account 登录（仅有 Bearer 凭证不够）。',
      ),
    );
  }
}

function view(key: IApiKey): ApiKeyView {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    last4: key.last4,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt ?? null,
  };
}
