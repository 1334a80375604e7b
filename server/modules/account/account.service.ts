/**
 * Accounts and how people prove who they are: email + password (argon2id), email one-time codes, and
 * (through `OidcService`) a third-party identity provider. Sign-in, sign-up and codes are throttled per IP
 * and per account; wrong-password and unknown-email answers are the same, in text and in time.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { defaultLocale, isLocale, locales, type Locale, type Localized } from '../../i18n/locale.ts';
import { sameDigest, sha256Hex } from '../identity/credential-token.ts';
import type { IdentityService } from '../identity/identity.service.ts';
import type { ClientInfo } from '../../http/client-info.ts';
import { hour, minute, type Throttle } from '../../rate-limit/throttle.ts';
import { rateLimitedError } from '../../rate-limit/rate-limit.service.ts';
import { entityManager } from '../../db/unit-of-work.ts';
import { Account, type AccountKind, type IAccount } from './account.entity.ts';
import { accountRoles, type AccountRole } from '../../authz/principal.ts';
import { EmailCode } from './email-code.entity.ts';
import { signInCodeMail, signUpCodeMail, signUpExistingMail, type MailText } from './account.mail.ts';
import type { Mailer } from './mailer.ts';
import { decoyHash, guessablePassword, hashPassword, needsRehash, passwordRules, verifyPassword } from './password.ts';
import type { Principal } from '../../authz/principal.ts';

export interface AccountView {
  id: string;
  email: string;
  displayName: string | null;
  role: AccountRole;
  planPackage: string;
  /** When a time-limited package ends (the account then returns to Free); null when it does not. */
  planPackageUntil: Date | null;
  /** When staff disabled the account; null while it is enabled. */
  disabledAt: Date | null;
  emailVerified: boolean;
  hasPassword: boolean;
  createdAt: Date;
  /** The language the member picked, or null to follow the browser. */
  locale: Locale | null;
  /** `person`, or `organisation` for an enterprise organisation (a payer that never signs in). */
  kind: AccountKind;
}

export interface SignUpInput {
  email: string;
  password: string;
  role?: AccountRole;
  displayName?: string | null;
}

/** Printable, no spaces or control characters (PostgreSQL refuses NUL in text), one @, a dot in the domain. */
const emailPattern = /^[^\s@\p{Cc}\p{Cf}]+@[^\s@\p{Cc}\p{Cf}]+\.[^\s@\p{Cc}\p{Cf}]+$/u;

export class AccountService {
  readonly #config: Config;
  readonly #db: Database;
  readonly #throttle: Throttle;
  readonly #mailer: Mailer;
  readonly #identity: IdentityService;

  constructor(config: Config, db: Database, throttle: Throttle, mailer: Mailer, identity: IdentityService) {
    this.#config = config;
    this.#db = db;
    this.#throttle = throttle;
    this.#mailer = mailer;
    this.#identity = identity;
    // Hash the decoy now, so the first unknown-email sign-in does not take twice as long as the others.
    decoyHash().catch(() => undefined);
  }

  /**
   * Creates a member account with a password at once, for trusted callers (the CLI, tests): the web's
   * sign-up is `requestSignUp`. Throws 409 `account_exists` if the email is taken. `client` (the caller's
   * IP) turns on sign-up throttling.
   */
  async signUp(input: SignUpInput, client: ClientInfo = {}): Promise<AccountView> {
    const email = normaliseEmail(input.email);
    checkPassword(input.password, email);
    const role = input.role ?? 'member';
    if (!accountRoles.includes(role)) throw new AppError('invalid_request', `role must be one of ${accountRoles.join(', ')}.`, { param: 'role' });
    if (client.ip) await this.#throttleSignUp(email, client.ip);
    const passwordHash = await hashPassword(input.password);
    const em = entityManager(this.#db);
    const account = em.create(Account, {
      email,
      displayName: input.displayName?.trim() || null,
      role,
      planPackage: 'free',
      planPackageUntil: null,
      disabledAt: null,
      passwordHash,
      emailVerifiedAt: null,
    });
    try {
      await em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) {
        throw new AppError('account_exists', bilingual('An account with {email} already exists; sign in instead.', '{email} 已注册，请直接登录。', { email }), { param: 'email' });
      }
      throw error;
    }
    return view(account);
  }

  /** Checks email + password. Wrong password and unknown email give the same 401 `invalid_credentials`. */
  async signInWithPassword(input: { email: string; password: string }, client: ClientInfo = {}): Promise<AccountView> {
    const email = normaliseEmail(input.email);
    if (typeof input.password !== 'string' || input.password.length === 0) throw new AppError('invalid_request', bilingual('password is required.', '请填写密码。'), { param: 'password' });
    await this.#throttleSignIn(email, client);
    const accountTry = await this.#spendAccountTry(email, client);
    const em = entityManager(this.#db);
    const account = await em.findOne(Account, { email });
    const stored = account?.passwordHash ?? (await decoyHash());
    const ok = (await verifyPassword(stored, input.password.slice(0, passwordRules.maxLength))) && !!account?.passwordHash;
    if (!ok || !account) throw new AppError('invalid_credentials');
    await accountTry.succeeded();
    assertEnabled(account);
    if (needsRehash(stored)) {
      account.passwordHash = await hashPassword(input.password);
      await em.flush();
    }
    return view(account);
  }

  /**
   * Web sign-up (REST and GraphQL), verification-first, and the same answer — status, shape and work (the
   * password is hashed, a code row written, one mail sent) — whether or not the address has an account, so
   * it tells nobody which addresses do. A new address gets a code, and the account is created with this
   * password when `verifyEmailCode` checks it. An address with an account gets a mail telling its owner
   * someone tried, with a sign-in code in case it was them; the account and its password are left alone.
   */
  async requestSignUp(input: { email: string; password: string }, client: ClientInfo = {}): Promise<{ email: string; expiresAt: Date }> {
    const email = normaliseEmail(input.email);
    this.#assertMailReachesMembers();
    checkPassword(input.password, email);
    if (client.ip) await this.#throttleSignUp(email, client.ip);
    const passwordHash = await hashPassword(input.password);
    return this.#sendCode(email, client, { ip: false }, (known) => (known ? { mail: signUpExistingMail, passwordHash: null } : { mail: signUpCodeMail, passwordHash }));
  }

  /**
   * Sends a 6-digit code (10 minutes, 5 attempts). Same answer whether or not the account exists.
   * `forOperator`: the caller shows the code itself (`svc admin create-user --email-code`), so it need not be mailable.
   */
  async startEmailCode(input: { email: string }, client: ClientInfo = {}, options: { forOperator?: boolean } = {}): Promise<{ email: string; expiresAt: Date }> {
    const email = normaliseEmail(input.email);
    if (!options.forOperator) this.#assertMailReachesMembers();
    return this.#sendCode(email, client, { ip: true }, () => ({ mail: signInCodeMail, passwordHash: null }));
  }

  /** In production without a mail server a code would go nowhere: say so instead of "a code is on its way". */
  #assertMailReachesMembers(): void {
    if (!this.#mailer.deliversToMembers) throw new AppError('mail_not_configured');
  }

  /**
   * Writes a code for `email` (spending earlier ones) and mails it, in the account's language (an address
   * with no account yet gets the page's). `pick` chooses the mail, and the sign-up password hash the code
   * carries, by whether the address has an account. Throttled per email (its mailbox), and per IP when asked.
   */
  async #sendCode(
    email: string,
    client: ClientInfo,
    limits: { ip: boolean },
    pick: (known: boolean) => { mail: Localized<(values: { code: string; minutes: number }) => MailText>; passwordHash: string | null },
  ): Promise<{ email: string; expiresAt: Date }> {
    const { throttle } = this.#config.auth;
    const rules = [{ key: `email-code:email:${email}`, limit: throttle.emailCodePerHourPerEmail, periodMs: hour }];
    if (limits.ip && client.ip) rules.push({ key: `email-code:ip:${client.ip}`, limit: throttle.emailCodePerHourPerIp, periodMs: hour });
    await this.#throttle.enforce(rules, { en: 'email codes', zh: '验证码发送过于频繁' });
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const id = randomUUID();
    const expiresAt = new Date(Date.now() + this.#config.auth.emailCodeTtlSeconds * 1000);
    const em = entityManager(this.#db);
    const known = await em.findOne(Account, { email }, { fields: ['locale'] });
    const { mail, passwordHash } = pick(known !== null);
    // Only the newest code works: earlier unused ones are spent.
    await em.nativeUpdate(EmailCode, { email, consumedAt: null }, { consumedAt: new Date() });
    em.create(EmailCode, { id, email, codeHash: codeDigest(id, code), expiresAt, attempts: 0, consumedAt: null, passwordHash });
    await em.flush();
    const minutes = Math.round(this.#config.auth.emailCodeTtlSeconds / 60);
    const locale = accountLocale(known?.locale) ?? client.locale ?? defaultLocale;
    await this.#mailer.send({ to: email, ...mail[locale]({ code, minutes }) });
    return { email, expiresAt };
  }

  /**
   * Checks an email code. Right: the account (created on first sign-in) with its email marked verified.
   * Wrong, expired or out of attempts: 401 `invalid_credentials`.
   */
  async verifyEmailCode(input: { email: string; code: string }, client: ClientInfo = {}): Promise<AccountView> {
    const email = normaliseEmail(input.email);
    const code = String(input.code ?? '').replace(/\s+/g, '');
    if (!/^\d{6}$/.test(code)) throw new AppError('invalid_request', bilingual('code must be the 6 digits from the email.', '验证码应为邮件中的 6 位数字。'), { param: 'code' });
    await this.#throttleSignIn(email, client);
    const connection = this.#db.orm.em.getConnection();
    // Count the attempt first (atomically), so concurrent guesses cannot exceed the limit.
    const row: { id: string; code_hash: string; password_hash: string | null } | undefined = await connection.execute<{ id: string; code_hash: string; password_hash: string | null }>(
      `update "email_code" set "attempts" = "attempts" + 1, "updated_at" = now()
        where "id" = (select "id" from "email_code" where "email" = ? and "consumed_at" is null and "expires_at" > now()
                       order by "created_at" desc limit 1)
          and "attempts" < ? and "consumed_at" is null
        returning "id", "code_hash", "password_hash"`,
      [email, this.#config.auth.emailCodeMaxAttempts],
      'get',
    );
    const wrong = () =>
      new AppError('invalid_credentials', bilingual('The code is wrong or has expired; request a new one if needed.', '验证码错误或已过期，如有需要请重新获取。'), { param: 'code' });
    if (!row || !sameDigest(row.code_hash, codeDigest(row.id, code))) throw wrong();
    const spent: { id: string } | undefined = await connection.execute<{ id: string }>(
      `update "email_code" set "consumed_at" = now(), "updated_at" = now() where "id" = ? and "consumed_at" is null returning "id"`,
      [row.id],
      'get',
    );
    if (!spent) throw wrong();
    // A sign-up's code: the account is created now, with the password chosen at sign-up.
    return this.signInVerified(email, null, row.password_hash);
  }

  /**
   * Signs in by an email address proven elsewhere (an email code, or an OIDC provider's verified email):
   * the account, created on first use. A disabled account is refused with 401 `account_disabled`.
   */
  async signInVerified(email: string, displayName?: string | null, passwordHash?: string | null): Promise<AccountView> {
    // Refused before anything changes: the proof must not take a disabled account over (revoking its keys).
    const existing = await entityManager(this.#db).findOne(Account, { email: normaliseEmail(email) });
    if (existing) assertEnabled(existing);
    const account = await this.findOrCreateVerified(email, displayName, passwordHash);
    assertEnabled(account);
    return view(account);
  }

  /**
   * For sign-in by a verified email (code or OIDC): the account, created as a member on first use.
   *
   * The first proof of an address that was signed up with a password but never verified takes the account
   * over: anyone could have signed up with someone else's address (account pre-hijacking), so that password
   * stops working and every session and API key made before the proof is revoked, on every instance.
   * `passwordHash` (from a sign-up's code) becomes the password of an account that has none.
   */
  async findOrCreateVerified(emailInput: string, displayName?: string | null, passwordHash?: string | null): Promise<IAccount> {
    const email = normaliseEmail(emailInput);
    const connection = this.#db.orm.em.getConnection();
    const now = new Date();
    const claimed = await this.#db.orm.em.fork().transactional(async (em) => {
      const tx = em.getConnection();
      const row: { id: string } | undefined = await tx.execute<{ id: string }>(
        `update "account" set "email_verified_at" = ?, "password_hash" = null, "updated_at" = ?
          where "email" = ? and "email_verified_at" is null and "password_hash" is not null returning "id"`,
        [now, now, email],
        'get',
        em.getTransactionContext(),
      );
      if (!row) return null;
      await tx.execute(`update "session" set "revoked_at" = ?, "updated_at" = ? where "account_id" = ? and "revoked_at" is null`, [now, now, row.id], 'run', em.getTransactionContext());
      await tx.execute(`update "api_key" set "revoked_at" = ?, "updated_at" = ? where "account_id" = ? and "revoked_at" is null`, [now, now, row.id], 'run', em.getTransactionContext());
      return row.id;
    });
    if (claimed) await this.#identity.invalidateAccount(claimed);
    await connection.execute(
      `insert into "account" ("id", "created_at", "updated_at", "email", "display_name", "role", "plan_package", "email_verified_at", "password_hash")
       values (?, ?, ?, ?, ?, 'member', 'free', ?, ?)
       on conflict ("email") do update set "email_verified_at" = coalesce("account"."email_verified_at", excluded."email_verified_at"),
                                           "password_hash" = coalesce("account"."password_hash", excluded."password_hash")`,
      [randomUUID(), now, now, email, displayName?.trim() || null, now, passwordHash ?? null],
      'run',
    );
    const account = await entityManager(this.#db).findOneOrFail(Account, { email }, { refresh: true });
    return account;
  }

  async findById(id: string): Promise<AccountView | null> {
    const account = await entityManager(this.#db).findOne(Account, { id });
    return account ? view(account) : null;
  }

  /** The caller's own account. */
  async me(principal: Principal): Promise<AccountView> {
    const account = await this.findById(principal.accountId);
    if (!account) throw new AppError('sign_in_required', 'The account behind this credential no longer exists.');
    return account;
  }

  /** Stores the language the member picked in the web app (and for the email svc sends them). */
  async setLocale(principal: Principal, locale: string): Promise<AccountView> {
    if (!isLocale(locale)) throw new AppError('invalid_request', bilingual('locale must be one of {locales}.', 'locale 必须是 {locales} 之一。', { locales: locales.join(', ') }), { param: 'locale' });
    const em = entityManager(this.#db);
    const account = await em.findOne(Account, { id: principal.accountId });
    if (!account) throw new AppError('sign_in_required', 'The account behind this credential no longer exists.');
    account.locale = locale;
    await em.flush();
    return view(account);
  }

  /**
   * Bootstraps or updates a user with a role (the `svc admin create-user` command). With a password it sets
   * the password (of an existing account too, so staff can be promoted without a second account); without
   * one the account signs in by email code. Returns the role the account had before (null when created).
   */
  async createUser(input: { email: string; password?: string | null; role: AccountRole }): Promise<{ account: AccountView; created: boolean; previousRole: AccountRole | null }> {
    const email = normaliseEmail(input.email);
    if (input.password != null) checkPassword(input.password, email);
    if (!accountRoles.includes(input.role)) throw new AppError('invalid_request', `role must be one of ${accountRoles.join(', ')}.`, { param: 'role' });
    const em = entityManager(this.#db);
    const existing = await em.findOne(Account, { email });
    if (!existing) {
      if (input.password != null) return { account: await this.signUp({ email, password: input.password, role: input.role }), created: true, previousRole: null };
      const account = em.create(Account, {
        email,
        displayName: null,
        role: input.role,
        planPackage: 'free',
        planPackageUntil: null,
        disabledAt: null,
        passwordHash: null,
        emailVerifiedAt: null,
      });
      await em.flush();
      return { account: view(account), created: true, previousRole: null };
    }
    const previousRole = existing.role;
    existing.role = input.role;
    if (input.password != null) existing.passwordHash = await hashPassword(input.password);
    await em.flush();
    await this.#identity.invalidateAccount(existing.id);
    return { account: view(existing), created: false, previousRole };
  }

  /** Sign-ups per IP and per email domain. */
  async #throttleSignUp(email: string, ip: string): Promise<void> {
    const { throttle } = this.#config.auth;
    const domain = email.slice(email.lastIndexOf('@') + 1);
    await this.#throttle.enforce(
      [
        { key: `signup:ip:${ip}`, limit: throttle.signUpPerHourPerIp, periodMs: hour },
        { key: `signup:domain:${domain}`, limit: throttle.signUpPerHourPerDomain, periodMs: hour },
      ],
      { en: `sign-ups (from this address, or with @${domain} addresses)`, zh: `来自此地址或使用 @${domain} 邮箱的注册过于频繁` },
    );
  }

  /** Per IP, and per account from one IP: counted on every attempt (password or email code). */
  async #throttleSignIn(email: string, client: ClientInfo): Promise<void> {
    if (!client.ip) return;
    const { throttle } = this.#config.auth;
    await this.#throttle.enforce(
      [
        { key: `signin:ip:${client.ip}`, limit: throttle.signInPerMinutePerIp, periodMs: minute },
        { key: `signin:acct-ip:${email}:${client.ip}`, limit: 10, periodMs: 15 * minute },
      ],
      { en: 'sign-in attempts', zh: '登录尝试过于频繁' },
    );
  }

  /**
   * The per-account password limit, against guessing from many addresses. The try is spent before the
   * password is checked (so concurrent guesses cannot pass the limit) and given back when it was right. An
   * address that signed in to this account before is exempt, so an attacker elsewhere cannot lock the owner
   * out; and email codes, which have their own attempt limit, are never blocked by it.
   */
  async #spendAccountTry(email: string, client: ClientInfo): Promise<{ succeeded(): Promise<void> }> {
    const knownKey = client.ip ? `signin-known:${email}:${client.ip}` : null;
    const remember = async () => {
      if (knownKey) await this.#throttle.increment(knownKey, knownAddressMs);
    };
    if (knownKey && (await this.#throttle.count(knownKey)) > 0) return { succeeded: remember };
    const key = `signin-tries:${email}`;
    const limit = this.#config.auth.throttle.signInPerHourPerAccount;
    if ((await this.#throttle.increment(key, hour)) > limit) {
      await this.#throttle.decrement(key);
      throw rateLimitedError(await this.#throttle.ttl(key), { what: { en: 'sign-in attempts for this account', zh: '此账户的登录尝试过于频繁' } });
    }
    return {
      succeeded: async () => {
        await this.#throttle.decrement(key);
        await remember();
      },
    };
  }
}

function assertEnabled(account: IAccount): void {
  if (account.disabledAt) throw new AppError('account_disabled', 'This account is disabled; contact support to have it enabled again.');
}

/** How long an address that signed in to an account stays exempt from that account's password limit. */
const knownAddressMs = 30 * 24 * hour;

export function normaliseEmail(input: unknown): string {
  const email = typeof input === 'string' ? input.trim().toLowerCase() : '';
  if (!email) throw new AppError('invalid_request', bilingual('email is required.', '请填写邮箱地址。'), { param: 'email' });
  if (email.length > 254 || !emailPattern.test(email)) {
    const shown = email.slice(0, 80).replace(/[\p{Cc}\p{Cf}]/gu, '?');
    throw new AppError('invalid_request', bilingual('"{email}" is not an email address.', '“{email}”不是有效的邮箱地址。', { email: shown }), { param: 'email' });
  }
  return email;
}

function checkPassword(password: unknown, email: string): asserts password is string {
  if (typeof password !== 'string') throw new AppError('invalid_request', bilingual('password is required.', '请填写密码。'), { param: 'password' });
  if (password.length < passwordRules.minLength) {
    throw new AppError('invalid_request', bilingual('password must be at least {min} characters.', '密码至少需要 {min} 个字符。', { min: passwordRules.minLength }), { param: 'password' });
  }
  if (password.length > passwordRules.maxLength) {
    throw new AppError('invalid_request', bilingual('password must be at most {max} characters.', '密码最多 {max} 个字符。', { max: passwordRules.maxLength }), { param: 'password' });
  }
  switch (guessablePassword(password, email)) {
    case 'email':
      throw new AppError('invalid_request', bilingual('password must not be your email address.', '密码不能是您的邮箱地址。'), { param: 'password' });
    case 'common':
      throw new AppError(
        'invalid_request',
        bilingual(
          'password is too easy to guess (a common password, or close to one); a phrase of a few unrelated words is both strong and easy to remember.',
          '密码太容易被猜到（是常见密码或与之相近）；由几个互不相关的词组成的短语既安全又好记。',
        ),
        { param: 'password' },
      );
  }
}

/** The code is bound to its row id, so equal codes never share a digest. */
function codeDigest(id: string, code: string): string {
  return sha256Hex(`${id}:${code}`);
}

export function view(account: IAccount): AccountView {
  return {
    id: account.id,
    email: account.email,
    displayName: account.displayName ?? null,
    role: account.role,
    planPackage: account.planPackage,
    planPackageUntil: account.planPackageUntil ?? null,
    disabledAt: account.disabledAt ?? null,
    emailVerified: account.emailVerifiedAt != null,
    hasPassword: account.passwordHash != null,
    createdAt: account.createdAt,
    locale: accountLocale(account.locale),
    kind: account.kind ?? 'person',
  };
}

/** A stored locale svc still speaks, or null (a language removed since is "follow the browser" again). */
function accountLocale(value: string | null | undefined): Locale | null {
  return isLocale(value) ? value : null;
}
