/**
 * What personal keys (`svc_live_`) and organisation keys (`svc_ent_`) share when they are minted: the
 * label's rules and the stored row — the token's SHA-256 and its display parts, never the token itself.
 */
import type { Em } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { displayParts, newToken, sha256Hex, tokenPrefixes } from '../identity/credential-token.ts';
import { ApiKey, type ApiKeyKind, type IApiKey } from './api-key.entity.ts';
import type { KeyLimitColumns } from './key-limits.ts';

/** A key's label, trimmed: 1 to 100 characters without control characters, else invalid_request on `name`. */
export function keyName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name.length === 0 || name.length > 100) throw new AppError('invalid_request', bilingual('name must be 1 to 100 characters.', '名称长度须为 1 到 100 个字符。'), { param: 'name' });
  if (/[\p{Cc}\p{Cf}]/u.test(name)) throw new AppError('invalid_request', bilingual('name must not contain control characters.', '名称不能包含控制字符。'), { param: 'name' });
  return name;
}

/** A new live key of `kind` in `em` (the caller flushes) and its token, to be shown this once. */
export function mintKey(
  em: Em,
  kind: ApiKeyKind,
  fields: { accountId: string; name: string; allowedCidrs?: string[]; createdBy?: string } & KeyLimitColumns,
): { key: IApiKey; token: string } {
  const token = newToken(kind === 'personal' ? tokenPrefixes.personalKey : tokenPrefixes.enterpriseKey);
  const key = em.create(ApiKey, { ...fields, kind, tokenHash: sha256Hex(token), ...displayParts(token), lastUsedAt: null, revokedAt: null });
  return { key, token };
}
