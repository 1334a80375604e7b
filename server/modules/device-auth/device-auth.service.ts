/**
 * Device login (spec §3, DESIGN "Device login", RFC 8628). A client starts a login and polls with its
 * device code; the member opens the verification page in a signed-in browser, sees the client name and
 * the user code, and explicitly approves or denies. Rules enforced here, for every transport:
 *   - user codes: 8 characters of BCDFGHJKLMNPQRSTVWXZ (case and dash ignored); device codes: 256 bits,
 *     stored as SHA-256 only;
 *   - the first signed-in web session that opens a code owns it; no other session can approve it;
 *   - an account that enters `deviceWrongCodeLimit` wrong codes (an IP: four times as many) is locked out of code
 *     entry for the code lifetime, so codes cannot be guessed, not even by many requests at once;
 *   - polling faster than `interval` answers `slow_down` and adds 5 s to the interval for good;
 *   - the session token is handed out exactly once (row lock on the authorization while it is consumed).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual, type Bilingual } from '../../errors/app-error.ts';
import type { AccountService, AccountView } from '../account/account.service.ts';
import type { Principal } from '../../authz/principal.ts';
import * as authz from '../../authz/authz.ts';
import { sha256Hex } from '../identity/credential-token.ts';
import type { SessionService } from '../session/session.service.ts';
import type { ClientInfo } from '../../http/client-info.ts';
import { minute, type Throttle } from '../../rate-limit/throttle.ts';
import { rateLimitedError } from '../../rate-limit/rate-limit.service.ts';
import { entityManager } from '../../db/unit-of-work.ts';
import { DeviceAuthorization, type IDeviceAuthorization } from './device-auth.entity.ts';

export const userCodeAlphabet = 'BCDFGHJKLMNPQRSTVWXZ';
/** Extra seconds added to the interval by each `slow_down` (RFC 8628 §3.5). */
const slowDownStep = 5;
/** Clock and network jitter forgiven when judging whether a poll came too early. */
const pollJitterMs = 250;

export interface DeviceStart {
  deviceCode: string;
  /** Formatted for people: `BCDF-GHJK`. */
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string;
  expiresIn: number;
  interval: number;
}

export interface DeviceToken {
  sessionToken: string;
  tokenType: 'Bearer';
  expiresAt: Date;
  expiresIn: number;
  account: AccountView;
}

export type DeviceAuthState = 'pending' | 'approved' | 'denied' | 'expired';

/** "This login was already …" in both languages. */
const decidedState: Record<DeviceAuthState, Bilingual> = {
  pending: { en: 'pending', zh: '在等待批准' },
  approved: { en: 'approved', zh: '被批准' },
  denied: { en: 'denied', zh: '被拒绝' },
  expired: { en: 'expired', zh: '过期' },
};

export interface DeviceAuthView {
  userCode: string;
  clientName: string;
  state: DeviceAuthState;
  createdAt: Date;
  expiresAt: Date;
}

type PollOutcome =
  | { kind: 'error'; code: 'invalid_grant' | 'expired_token' | 'slow_down' | 'authorization_pending' | 'access_denied'; message?: string }
  | { kind: 'token'; token: string; expiresAt: Date; accountId: string };

export class DeviceAuthService {
  readonly #config: Config;
  readonly #db: Database;
  readonly #throttle: Throttle;
  readonly #sessions: SessionService;
  readonly #accounts: AccountService;

  constructor(config: Config, db: Database, throttle: Throttle, sessions: SessionService, accounts: AccountService) {
    this.#config = config;
    this.#db = db;
    this.#throttle = throttle;
    this.#sessions = sessions;
    this.#accounts = accounts;
  }

  /** Starts a device login for a client. Rate-limited per IP. */
  async start(input: { client: unknown }, client: ClientInfo = {}): Promise<DeviceStart> {
    const clientName = parseClientName(input.client);
    if (client.ip) {
      await this.#throttle.enforce(
        [{ key: `device-start:ip:${client.ip}`, limit: this.#config.rateLimits.deviceStartPerMinute, periodMs: minute }],
        { en: 'device logins started from this address', zh: '此地址发起的设备登录过于频繁' },
      );
    }
    const { deviceCodeTtlSeconds: expiresIn, devicePollIntervalSeconds: interval } = this.#config.auth;
    const deviceCode = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + expiresIn * 1000);
    for (let attempt = 0; ; attempt += 1) {
      const userCode = newUserCode();
      const em = entityManager(this.#db);
      em.create(DeviceAuthorization, {
        deviceCodeHash: sha256Hex(deviceCode),
        userCode,
        clientName,
        status: 'pending',
        intervalSeconds: interval,
        expiresAt,
        lastPolledAt: null,
        ownerSessionId: null,
        accountId: null,
        sessionId: null,
        decidedAt: null,
      });
      try {
        await em.flush();
      } catch (error) {
        // A live authorization already has this user code (1 in 2.5e10): draw another.
        if (error instanceof UniqueConstraintViolationException && attempt < 5) {
          em.clear();
          continue;
        }
        throw error;
      }
      const formatted = formatUserCode(userCode);
      const verificationUri = `${this.#config.server.webUrl}/device`;
      return {
        deviceCode,
        userCode: formatted,
        verificationUri,
        verificationUriComplete: `${verificationUri}?user_code=${formatted}`,
        expiresIn,
        interval,
      };
    }
  }

  /**
   * One poll. Returns the session token once approved (exactly once); otherwise throws a 400 AppError with
   * code `authorization_pending`, `slow_down`, `access_denied`, `expired_token` or `invalid_grant`.
   * `clientId`, when given (RFC endpoint), must match the client that started the login.
   */
  async poll(input: { deviceCode: unknown; clientId?: string }, client: ClientInfo = {}): Promise<DeviceToken> {
    if (typeof input.deviceCode !== 'string' || input.deviceCode.length === 0) {
      throw new AppError('invalid_request', bilingual('device_code is required.', 'device_code 为必填项。'), { param: 'device_code' });
    }
    if (client.ip) {
      await this.#throttle.enforce(
        [{ key: `device-poll:ip:${client.ip}`, limit: this.#config.auth.throttle.devicePollPerMinutePerIp, periodMs: minute }],
        { en: 'device polls from this address', zh: '此地址的设备轮询过于频繁' },
      );
    }
    const hash = sha256Hex(input.deviceCode);
    const outcome = await entityManager(this.#db).transactional(async (em): Promise<PollOutcome> => {
      const row = await em.findOne(DeviceAuthorization, { deviceCodeHash: hash }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!row) return { kind: 'error', code: 'invalid_grant', message: 'The device_code is unknown.' };
      if (input.clientId !== undefined && input.clientId !== row.clientName) {
        return { kind: 'error', code: 'invalid_grant', message: 'The device_code was issued to a different client_id.' };
      }
      if (row.status === 'consumed') return { kind: 'error', code: 'invalid_grant', message: 'The device_code has already been exchanged for a token.' };
      const now = new Date();
      if (row.expiresAt <= now) return { kind: 'error', code: 'expired_token' };
      const tooFast = row.lastPolledAt !== null && row.lastPolledAt !== undefined && now.getTime() - row.lastPolledAt.getTime() < row.intervalSeconds * 1000 - pollJitterMs;
      row.lastPolledAt = now;
      if (tooFast) {
        row.intervalSeconds += slowDownStep;
        return {
          kind: 'error',
          code: 'slow_down',
          message: `Polling too fast: wait at least ${row.intervalSeconds} s between polls from now on.`,
        };
      }
      switch (row.status) {
        case 'pending':
          return { kind: 'error', code: 'authorization_pending' };
        case 'denied':
          return { kind: 'error', code: 'access_denied' };
        case 'approved': {
          const issued = await this.#sessions.issueDeviceSession(row.accountId!, row.clientName, client, em);
          row.status = 'consumed';
          row.sessionId = issued.session.id;
          return { kind: 'token', token: issued.token, expiresAt: issued.session.expiresAt, accountId: row.accountId! };
        }
        default:
          return assertNever(row.status);
      }
    });
    if (outcome.kind === 'error') throw new AppError(outcome.code, outcome.message);
    const account = await this.#accounts.findById(outcome.accountId);
    if (!account) throw new AppError('invalid_grant', bilingual('The account that approved this login no longer exists.', '批准此次登录的账户已不存在。'));
    return {
      sessionToken: outcome.token,
      tokenType: 'Bearer',
      expiresAt: outcome.expiresAt,
      expiresIn: Math.round((outcome.expiresAt.getTime() - Date.now()) / 1000),
      account,
    };
  }

  /** Opens a code on the approval page: the first signed-in web session to do so owns it. */
  async open(principal: authz.Actor, userCodeInput: unknown, client: ClientInfo = {}): Promise<DeviceAuthView> {
    authz.assert(principal, 'device:approve');
    return view(await this.#claim(principal, userCodeInput, client));
  }

  /** Approves or denies a code the caller's session owns (claiming it first if nobody has). */
  async decide(principal: authz.Actor, userCodeInput: unknown, decision: 'approve' | 'deny', client: ClientInfo = {}): Promise<DeviceAuthView> {
    authz.assert(principal, 'device:approve');
    const row = await this.#claim(principal, userCodeInput, client);
    const em = entityManager(this.#db);
    const updated = await em.nativeUpdate(
      DeviceAuthorization,
      { id: row.id, status: 'pending', ownerSessionId: principal.credential.id, expiresAt: { $gt: new Date() } },
      { status: decision === 'approve' ? 'approved' : 'denied', accountId: principal.accountId, decidedAt: new Date() },
    );
    const after = await em.findOneOrFail(DeviceAuthorization, { id: row.id }, { refresh: true });
    if (updated === 0) {
      const state = view(after).state;
      if (state === 'expired') throw new AppError('expired_token', bilingual('This code has expired; start a new login on your device.', '此代码已过期，请在设备上重新发起登录。'));
      throw new AppError('invalid_request', bilingual('This login was already {state}.', '此次登录已{state}。', { state: decidedState[state] }), { param: 'userCode' });
    }
    return view(after);
  }

  async #claim(principal: Principal, userCodeInput: unknown, client: ClientInfo): Promise<IDeviceAuthorization> {
    const userCode = normaliseUserCode(userCodeInput);
    if (!userCode) {
      throw new AppError('invalid_request', bilingual('A user code is 8 letters from {alphabet}, like BCDF-GHJK.', '用户代码由 {alphabet} 中的 8 个字母组成，例如 BCDF-GHJK。', { alphabet: userCodeAlphabet }), { param: 'userCode' });
    }
    // Per account: the configured limit (signing in again does not buy more tries). Per IP a few times
    // more, so people behind one NAT are not locked out together, while one address cannot guess at scale.
    const limit = this.#config.auth.deviceWrongCodeLimit;
    const ttlMs = this.#config.auth.deviceCodeTtlSeconds * 1000;
    const locks = [
      { key: `device-wrong:account:${principal.accountId}`, limit },
      ...(client.ip ? [{ key: `device-wrong:ip:${client.ip}`, limit: limit * 4 }] : []),
    ];
    // Spend a try before looking (atomically), so concurrent guesses cannot get past the limit; a try that
    // finds a code, or is refused, is given back.
    const counts = await Promise.all(locks.map((lock) => this.#throttle.increment(lock.key, ttlMs)));
    const giveBack = () => Promise.all(locks.map((lock) => this.#throttle.decrement(lock.key)));
    const exceeded = locks.find((lock, i) => counts[i]! > lock.limit);
    if (exceeded) {
      await giveBack();
      throw rateLimitedError(await this.#throttle.ttl(exceeded.key), { what: { en: 'wrong device codes (code entry is locked)', zh: '设备代码输错次数过多（已暂停输入）' } });
    }
    const em = entityManager(this.#db);
    const now = new Date();
    let row = await em.findOne(DeviceAuthorization, { userCode, status: 'pending', expiresAt: { $gt: now } });
    if (!row) {
      // Reopening a code this session already decided (a page reload) is not a wrong guess.
      row = await em.findOne(DeviceAuthorization, { userCode, ownerSessionId: principal.credential.id }, { orderBy: { createdAt: 'desc' } });
      if (row) {
        await giveBack();
        return row;
      }
      const left = Math.max(0, Math.min(...locks.map((lock, i) => lock.limit - counts[i]!)));
      throw new AppError(
        'not_found',
        bilingual(
          'No pending device login has the code {code}; check the code shown on your device ({left} left).',
          '没有等待批准的设备登录使用代码 {code}，请核对设备上显示的代码（还可尝试 {left}）。',
          { code: formatUserCode(userCode), left: { en: left === 1 ? '1 try' : `${left} tries`, zh: `${left} 次` } },
        ),
        { param: 'userCode' },
      );
    }
    await giveBack();
    if (!row.ownerSessionId) {
      await em.nativeUpdate(DeviceAuthorization, { id: row.id, ownerSessionId: null }, { ownerSessionId: principal.credential.id });
      row = await em.findOneOrFail(DeviceAuthorization, { id: row.id }, { refresh: true });
    }
    if (row.ownerSessionId !== principal.credential.id) {
      throw new AppError('forbidden', bilingual('This code was already opened in another signed-in browser session; start a new login on your device.', '此代码已在另一个已登录的浏览器会话中打开，请在设备上重新发起登录。'));
    }
    return row;
  }
}

function newUserCode(): string {
  let code = '';
  for (let i = 0; i < 8; i += 1) code += userCodeAlphabet[randomInt(userCodeAlphabet.length)];
  return code;
}

export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/** Upper-cases and drops dashes and spaces; null unless 8 letters of the alphabet remain. */
export function normaliseUserCode(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  const code = input.toUpperCase().replace(/[\s-]+/g, '');
  return code.length === 8 && [...code].every((char) => userCodeAlphabet.includes(char)) ? code : null;
}

function parseClientName(input: unknown): string {
  const name = typeof input === 'string' ? input.replace(/[\p{Cc}\p{Cf}]/gu, '').trim() : '';
  if (!name) throw new AppError('invalid_request', bilingual('client is required: the name of the calling client, e.g. "svc-cli".', 'client 为必填项：调用方客户端的名称，例如 "svc-cli"。'), { param: 'client' });
  if (name.length > 100) throw new AppError('invalid_request', bilingual('client must be at most {max} characters.', 'client 最多 {max} 个字符。', { max: 100 }), { param: 'client' });
  return name;
}

function view(row: IDeviceAuthorization): DeviceAuthView {
  const expired = row.expiresAt <= new Date();
  const state: DeviceAuthState =
    row.status === 'approved' || row.status === 'consumed' ? 'approved' : row.status === 'denied' ? 'denied' : expired ? 'expired' : 'pending';
  return { userCode: formatUserCode(row.userCode), clientName: row.clientName, state, createdAt: row.createdAt, expiresAt: row.expiresAt };
}

function assertNever(value: never): never {
  throw new Error(`unexpected device authorization status ${String(value)}`);
}
