/**
 * Dynamic client registration (RFC 7591) for MCP clients: public clients (no secret, PKCE instead), each
 * with the exact redirect URIs it may be sent back to. A redirect URI is https, http on a loopback address
 * (RFC 8252 §7.3: a native app's local listener), or a private-use scheme such as `cursor://` (RFC 8252
 * §7.1) — never a scheme a browser would run or open in place (`javascript:`, `data:`, `file:`…).
 * Registration is open (as MCP clients expect) and limited per address.
 */
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { entityManager } from '../../db/unit-of-work.ts';
import type { Throttle } from '../../rate-limit/throttle.ts';
import type { ClientInfo } from '../../http/client-info.ts';
import { OAuthClient, type IOAuthClient } from './oauth.entity.ts';

export const grantTypes = ['authorization_code', 'refresh_token'] as const;
export const mcpScope = 'mcp';
const maxRedirectUris = 10;
const hour = 3_600_000;

/** Schemes that are not a place to deliver a code to: they run, show or fetch something instead. */
const refusedSchemes = new Set(['javascript', 'data', 'file', 'vbscript', 'about', 'blob', 'filesystem', 'ftp', 'ws', 'wss', 'mailto', 'tel', 'sms', 'intent']);

/** What `POST /oauth/register` answers (RFC 7591 §3.2.1). */
export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
  scope: string;
  client_uri?: string;
  software_id?: string;
  software_version?: string;
}

export class OAuthClients {
  readonly #config: Config;
  readonly #db: Database;
  readonly #throttle: Throttle;

  constructor(config: Config, db: Database, throttle: Throttle) {
    this.#config = config;
    this.#db = db;
    this.#throttle = throttle;
  }

  async register(input: unknown, client: ClientInfo = {}): Promise<RegisteredClient> {
    const metadata = parseMetadata(input);
    if (client.ip) {
      await this.#throttle.enforce(
        [{ key: `oauth-register:ip:${client.ip}`, limit: this.#config.auth.oauth.registrationsPerHourPerIp, periodMs: hour }],
        { en: 'OAuth client registrations from this address', zh: '此地址注册 OAuth 客户端过于频繁' },
      );
    }
    const em = entityManager(this.#db);
    const row = em.create(OAuthClient, { ...metadata, createdIp: client.ip?.slice(0, 64) ?? null });
    await em.flush();
    return registered(row);
  }

  /** The registered client `id` names, or null (also for ids that are not UUIDs). */
  async find(id: unknown): Promise<IOAuthClient | null> {
    if (typeof id !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
    return entityManager(this.#db).findOne(OAuthClient, { id: id.toLowerCase() });
  }
}

/**
 * The registered redirect URI a request's `redirect_uri` stands for, or null. Exact match, except that a
 * loopback http URI may name any port (RFC 8252 §7.3: the app learns its port only when it listens).
 */
export function matchRedirectUri(registered: readonly string[], requested: string | undefined): string | null {
  if (requested === undefined) return registered.length === 1 ? registered[0]! : null;
  if (registered.includes(requested)) return requested;
  const asked = loopbackParts(requested);
  if (asked === null) return null;
  return registered.some((uri) => loopbackParts(uri) === asked) ? requested : null;
}

/** A loopback http URI without its port, for comparison; null for anything else. */
function loopbackParts(uri: string): string | null {
  const url = parseUrl(uri);
  if (url?.protocol !== 'http:' || !isLoopback(url.hostname)) return null;
  return `${url.hostname}${url.pathname}${url.search}`;
}

/** Checks one redirect URI; throws 400 `invalid_redirect_uri` saying what is wrong with it. */
export function checkRedirectUri(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2000) {
    throw new AppError('invalid_redirect_uri', bilingual('Each redirect URI must be a string of at most 2000 characters.', '每个重定向 URI 都必须是不超过 2000 个字符的字符串。'));
  }
  const url = /[\p{Cc}\s]/u.test(value) ? null : parseUrl(value);
  const shown = JSON.stringify(value.slice(0, 200));
  if (!url) throw new AppError('invalid_redirect_uri', bilingual('The redirect URI {uri} is not an absolute URI.', '重定向 URI {uri} 不是绝对 URI。', { uri: shown }));
  if (url.hash !== '' || value.includes('#')) throw new AppError('invalid_redirect_uri', bilingual('The redirect URI {uri} must not have a fragment.', '重定向 URI {uri} 不得包含片段（#）。', { uri: shown }));
  if (url.username !== '' || url.password !== '') throw new AppError('invalid_redirect_uri', bilingual('The redirect URI {uri} must not carry a user name or password.', '重定向 URI {uri} 不得包含用户名或密码。', { uri: shown }));
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https' && url.hostname !== '') return value;
  if (scheme === 'http') {
    if (isLoopback(url.hostname)) return value;
    throw new AppError('invalid_redirect_uri', bilingual('The redirect URI {uri} uses http on a host that is not a loopback address: use https, or http://127.0.0.1 or http://localhost.', '重定向 URI {uri} 在非回环地址上使用 http：请使用 https，或 http://127.0.0.1、http://localhost。', { uri: shown }));
  }
  if (scheme !== 'https' && !refusedSchemes.has(scheme)) return value;
  throw new AppError('invalid_redirect_uri', bilingual('The redirect URI {uri} uses a scheme codes cannot be sent to: use https, http on a loopback address, or an app scheme of your own.', '重定向 URI {uri} 使用的协议无法接收授权码：请使用 https、回环地址上的 http，或您应用自己的协议。', { uri: shown }));
}

export function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

type ClientMetadata = Pick<IOAuthClient, 'clientName' | 'clientUri' | 'redirectUris' | 'softwareId' | 'softwareVersion'>;

function parseMetadata(input: unknown): ClientMetadata {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new AppError('invalid_client_metadata', bilingual('The registration body must be a JSON object of client metadata (RFC 7591).', '注册请求体必须是客户端元数据的 JSON 对象（RFC 7591）。'));
  }
  const body = input as Record<string, unknown>;
  const uris = body.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > maxRedirectUris) {
    throw new AppError('invalid_redirect_uri', bilingual('redirect_uris must list 1 to {max} redirect URIs.', 'redirect_uris 必须列出 1 到 {max} 个重定向 URI。', { max: maxRedirectUris }));
  }
  checkSubset(body.grant_types, grantTypes, 'grant_types');
  checkSubset(body.response_types, ['code'], 'response_types');
  return {
    redirectUris: [...new Set(uris.map(checkRedirectUri))],
    clientName: text(body.client_name, 'client_name', 200) ?? 'MCP client',
    clientUri: webUri(body.client_uri),
    softwareId: text(body.software_id, 'software_id', 200),
    softwareVersion: text(body.software_version, 'software_version', 100),
  };
}

function checkSubset(value: unknown, allowed: readonly string[], field: string): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || !allowed.includes(item))) {
    throw new AppError('invalid_client_metadata', bilingual('{field} may only contain {allowed}.', '{field} 只能包含 {allowed}。', { field, allowed: allowed.join(', ') }));
  }
}

/** A display string: control and format characters dropped, trimmed; null when absent or blank. */
function text(value: unknown, field: string, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new AppError('invalid_client_metadata', bilingual('{field} must be a string.', '{field} 必须是字符串。', { field }));
  const clean = value.replace(/[\p{Cc}\p{Cf}]/gu, '').trim();
  if (clean.length > max) throw new AppError('invalid_client_metadata', bilingual('{field} must be at most {max} characters.', '{field} 最多 {max} 个字符。', { field, max }));
  return clean === '' ? null : clean;
}

/** `client_uri`, shown as a link on the consent page: http(s) only. */
function webUri(value: unknown): string | null {
  const uri = text(value, 'client_uri', 500);
  if (uri === null) return null;
  const url = parseUrl(uri);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new AppError('invalid_client_metadata', bilingual('client_uri must be an http(s) URL.', 'client_uri 必须是 http(s) 网址。'));
  }
  return url.href;
}

function registered(row: IOAuthClient): RegisteredClient {
  return {
    client_id: row.id,
    client_id_issued_at: Math.floor(row.createdAt.getTime() / 1000),
    client_name: row.clientName,
    redirect_uris: row.redirectUris,
    grant_types: [...grantTypes],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: mcpScope,
    ...(row.clientUri ? { client_uri: row.clientUri } : {}),
    ...(row.softwareId ? { software_id: row.softwareId } : {}),
    ...(row.softwareVersion ? { software_version: row.softwareVersion } : {}),
  };
}
