/**
 * Organisation keys (`svc_ent_`, DESIGN §8.1): billed to the organisation (an account of kind
 * `organisation`), usable only from the addresses of the key's IP allow-list when it has one, and every
 * use counted as a connecting IP.
 */
import type { Database } from '../../../db/orm.ts';
import { AppError, bilingual } from '../../../errors/app-error.ts';
import { allowListMatcher, normaliseIp } from '../../../infra/cidr.ts';
import type { BearerClient, CredentialResolver, ResolvedCredential } from '../credential-resolver.ts';
import { tokenPrefixes } from '../credential-token.ts';
import { keyExpiry, keyLimitColumns, keyLimitsOf, type KeyLimitRow } from './key-limits.ts';

/** Where each use of an organisation key is counted: the enterprise module's connecting IPs. */
export interface ConnectionCounter {
  record(keyId: string, organisationId: string, ip: string): void;
}

/** What the cache keeps with an organisation key: who it bills, and where it may be used from. */
interface KeyExtra {
  organisationId: string;
  keyId: string;
  allow: ((ip: string) => boolean) | null;
}

interface KeyRow extends KeyLimitRow {
  id: string;
  last_used_at: Date | null;
  allowed_cidrs: string[] | string;
  account_id: string;
  email: string;
  plan_package: string;
  disabled_at: Date | null;
}

export class EnterpriseKeyResolver implements CredentialResolver {
  readonly prefix = tokenPrefixes.enterpriseKey;
  readonly label = 'organisation key';
  readonly #db: Database;
  readonly #connections: ConnectionCounter;

  constructor(db: Database, connections: ConnectionCounter) {
    this.#db = db;
    this.#connections = connections;
  }

  async resolve(hash: string): Promise<ResolvedCredential | null> {
    const row: KeyRow | undefined = await this.#db.orm.em.getConnection().execute<KeyRow>(
      `select k."id", k."last_used_at", k."allowed_cidrs", ${keyLimitColumns}, a."id" as "account_id", a."email", a."plan_package", a."disabled_at"
         from "api_key" k join "account" a on a."id" = k."account_id"
        where k."token_hash" = ? and k."kind" = 'enterprise' and k."revoked_at" is null and a."kind" = 'organisation'`,
      [hash],
      'get',
    );
    if (!row) return null;
    const cidrs = typeof row.allowed_cidrs === 'string' ? (JSON.parse(row.allowed_cidrs) as string[]) : row.allowed_cidrs;
    const extra: KeyExtra = { organisationId: row.account_id, keyId: row.id, allow: allowListMatcher(cidrs ?? []) };
    const limits = keyLimitsOf(row);
    return {
      principal: {
        accountId: row.account_id,
        email: row.email,
        role: 'member',
        payer: { kind: 'organisation', id: row.account_id, package: row.plan_package },
        credential: limits ? { kind: 'enterprise_key', id: row.id, limits } : { kind: 'enterprise_key', id: row.id },
      },
      expiresAt: keyExpiry(row),
      idleMs: null,
      lastUsedAt: row.last_used_at ? new Date(row.last_used_at).getTime() : 0,
      touch: { table: 'api_key', id: row.id },
      disabled: row.disabled_at !== null,
      extra,
    };
  }

  /** The allow-list check and the connecting-IP count, on every use of an organisation key. */
  admit(found: ResolvedCredential, client: BearerClient | undefined): void {
    const extra = found.extra as KeyExtra;
    const ip = client ? normaliseIp(client.ip) : null;
    if (extra.allow && (ip === null || !extra.allow(ip))) {
      throw new AppError(
        'ip_not_allowed',
        bilingual(
          'This organisation key may not be used from {ip}: the address is outside its IP allow-list. Call from an allowed address, or ask an organisation admin to add it.',
          '该组织密钥不能从 {ip} 使用：此地址不在其 IP 允许列表内。请从允许的地址调用，或请组织管理员添加此地址。',
          { ip: ip ?? 'an unknown address' },
        ),
      );
    }
    if (ip !== null) this.#connections.record(extra.keyId, extra.organisationId, ip);
  }
}
