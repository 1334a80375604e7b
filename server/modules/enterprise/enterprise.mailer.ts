/**
 * How the enterprise module's mails (enterprise.mail.ts) go out: to an account in its own language, or to an
 * address with no account yet (an invitation) in the language of the account that caused it. A mail that
 * fails is logged; it never undoes the change it reports.
 */
import type { Config } from '../../config/config.ts';
import type { Database } from '../../db/orm.ts';
import { defaultLocale, isLocale, type Locale } from '../../i18n/locale.ts';
import { Account } from '../account/account.entity.ts';
import type { MailText } from '../account/account.mail.ts';
import type { Mailer } from '../account/mailer.ts';

export class EnterpriseMailer {
  readonly #config: Config;
  readonly #db: Database;
  readonly #mailer: Mailer;
  readonly #warn: (message: string) => (error: unknown) => void;

  constructor(config: Config, db: Database, mailer: Mailer, warn: (message: string) => (error: unknown) => void) {
    this.#config = config;
    this.#db = db;
    this.#mailer = mailer;
    this.#warn = warn;
  }

  /** Where organisations are run: the console. */
  get consoleUrl(): string {
    return `${this.#config.server.webUrl}/enterprise/console`;
  }

  /** Where applications are made and followed. */
  get applyUrl(): string {
    return `${this.#config.server.webUrl}/enterprise/apply`;
  }

  /** Mails an account in its language. */
  async toAccount(accountId: string, build: (locale: Locale) => MailText): Promise<void> {
    try {
      const account = await this.#db.orm.em.fork().findOne(Account, { id: accountId }, { fields: ['email', 'locale'] });
      if (!account) return;
      await this.#mailer.send({ to: account.email, ...build(localeOf(account)) });
    } catch (error) {
      this.#warn('enterprise mail failed')(error);
    }
  }

  /** Mails an address that has no account, so no language of its own: `sender`'s, who most likely shares one with it. */
  async toAddress(email: string, sender: string, build: (locale: Locale) => MailText): Promise<void> {
    const locale = await this.#localeOf(sender).catch(() => defaultLocale);
    await this.#mailer.send({ to: email, ...build(locale) }).catch(this.#warn('invitation mail failed'));
  }

  /** An account's language (the default when it has none or is gone). */
  async #localeOf(accountId: string): Promise<Locale> {
    const account = await this.#db.orm.em.fork().findOne(Account, { id: accountId }, { fields: ['locale'] });
    return account ? localeOf(account) : defaultLocale;
  }
}

function localeOf(account: { locale?: string | null }): Locale {
  return isLocale(account.locale) ? account.locale : defaultLocale;
}
