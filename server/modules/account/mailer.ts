/**
 * Outgoing mail. With `mail.smtp` configured, nodemailer sends over SMTP. Without it, each message is kept
 * in this process (the CLI and tests read codes there, `lastTo`), printed to the log when `mail.logOutbox`
 * is on, and — outside production — put in the development outbox staff read at `/admin/outbox`
 * (`dev-outbox.ts`). In production without SMTP nothing can reach a member: `deliversToMembers` is false,
 * and sign-up and email codes are refused with `mail_not_configured` instead of pretending to send.
 */
import { createRequire } from 'node:module';
import type * as Nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import { Repeater } from 'graphql-yoga';
import type { Logger } from 'pino';
import { assert, type Actor } from '../../authz/authz.ts';
import type { Config } from '../../config/config.ts';
import { AppError } from '../../errors/app-error.ts';
import type { DevOutbox, OutboxMail } from './dev-outbox.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

export interface SentMail extends OutgoingMail {
  sentAt: Date;
}

const outboxSize = 200;

/**
 * How mail leaves this server: `smtp`; `outbox` (no SMTP, not production: the admin app's development
 * outbox); `log` (no SMTP, production, `mail.logOutbox`: only the server log); `unavailable` (nowhere).
 */
export type MailDelivery = 'smtp' | 'outbox' | 'log' | 'unavailable';

/** What staff see at `/admin/outbox`. */
export interface DevOutboxView {
  delivery: MailDelivery;
  /** Mail is also printed to the server log (`mail.logOutbox`). */
  logged: boolean;
  /** Newest first; empty unless `delivery` is `outbox`. */
  mails: OutboxMail[];
}

/** nodemailer (~2 MB of heap) loads only when SMTP is configured. */
const require = createRequire(import.meta.url);

export class Mailer {
  readonly #config: Config;
  readonly #log: Logger;
  readonly #transport: Transporter | null;
  /** This process's copy of what it could not send: the last messages, newest last. Empty when SMTP is configured. */
  readonly outbox: SentMail[] = [];
  readonly #devOutbox: DevOutbox | null;

  constructor(config: Config, log: Logger, devOutbox: DevOutbox | null = null) {
    this.#config = config;
    this.#log = log;
    const smtp = config.mail.smtp;
    this.#transport = smtp
      ? (require('nodemailer') as typeof Nodemailer).createTransport({
          host: smtp.host,
          port: smtp.port,
          secure: smtp.secure,
          auth: smtp.user ? { user: smtp.user, pass: smtp.passwordEnv ? (config.secrets[smtp.passwordEnv] ?? '') : '' } : undefined,
        })
      : null;
    this.#devOutbox = this.#transport || config.server.production ? null : devOutbox;
  }

  get mode(): MailDelivery {
    if (this.#transport) return 'smtp';
    if (!this.#config.server.production) return 'outbox';
    return this.#config.mail.logOutbox ? 'log' : 'unavailable';
  }

  /** Whether a code sent now can reach the member: by SMTP, or to staff through the outbox or the log. */
  get deliversToMembers(): boolean {
    return this.mode !== 'unavailable';
  }

  /** Staff: the development outbox (`/admin/outbox`). */
  async readDevOutbox(actor: Actor): Promise<DevOutboxView> {
    assert(actor, 'mail:dev-outbox:read');
    return { delivery: this.mode, logged: !this.#transport && this.#config.mail.logOutbox, mails: this.#devOutbox ? await this.#devOutbox.list() : [] };
  }

  /**
   * Staff: the development outbox at once, then again whenever a mail is put in it on any instance (when
   * there is none, only the first answer: where mail goes instead).
   */
  watchDevOutbox(actor: Actor): AsyncIterableIterator<DevOutboxView> {
    assert(actor, 'mail:dev-outbox:read');
    const outbox = this.#devOutbox;
    const read = () => this.readDevOutbox(actor);
    // A Repeater, not a generator: unsubscribing ends the watch at once, not at the next mail.
    return new Repeater<DevOutboxView>(async (push, stop) => {
      await push(await read());
      if (!outbox) return stop();
      const mails = outbox.watch();
      void stop.then(() => mails.return?.());
      for await (const _mail of mails) await push(await read());
      stop();
    });
  }

  async send(mail: OutgoingMail): Promise<void> {
    if (!this.#transport) {
      this.outbox.push({ ...mail, sentAt: new Date() });
      if (this.outbox.length > outboxSize) this.outbox.shift();
      // Messages carry sign-in codes: the log says one was "sent", never what it said — unless the operator
      // asked for the outbox to be printed (`mail.logOutbox`, for development without a mail server).
      if (this.#config.mail.logOutbox) this.#log.info({ mail: { to: mail.to, subject: mail.subject } }, `mail (no SMTP configured, development outbox): ${mail.text}`);
      else if (this.#devOutbox) this.#log.info({ mail: { to: mail.to } }, 'mail kept in the development outbox: staff read it at /admin/outbox (no SMTP configured; SVC_MAIL_LOG_OUTBOX=1 prints it here too)');
      else this.#log.warn({ mail: { to: mail.to } }, 'mail not sent: mail.smtp is not configured');
      await this.#devOutbox?.add(mail).catch((error: unknown) => this.#log.warn({ err: (error as Error).message }, 'could not keep the mail in the development outbox'));
      return;
    }
    try {
      await this.#transport.sendMail({ from: this.#config.mail.from, ...mail });
    } catch (error) {
      this.#log.warn({ err: (error as Error).message, to: mail.to }, 'SMTP send failed');
      throw new AppError('service_unavailable', 'The email could not be sent right now; try again shortly.', { cause: error });
    }
  }

  /** The newest outbox message to an address (development and tests). */
  lastTo(address: string): SentMail | undefined {
    return this.outbox.findLast((mail) => mail.to === address.toLowerCase());
  }
}
