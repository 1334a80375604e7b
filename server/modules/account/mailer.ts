/**
 * Outgoing mail. With `mail.smtp` configured, nodemailer sends over SMTP; otherwise each message is kept in
 * a small in-memory development outbox (tests read codes there) and printed to the log only when
 * `mail.logOutbox` is on.
 */
import { createRequire } from 'node:module';
import type * as Nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../../config/config.ts';
import { AppError } from '../../errors/app-error.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

export interface SentMail extends OutgoingMail {
  sentAt: Date;
}

const outboxSize = 200;

/** nodemailer (~2 MB of heap) loads only when SMTP is configured. */
const require = createRequire(import.meta.url);

export class Mailer {
  readonly #config: Config;
  readonly #log: Logger;
  readonly #transport: Transporter | null;
  /** The development outbox: the last messages, newest last. Empty when SMTP is configured. */
  readonly outbox: SentMail[] = [];

  constructor(config: Config, log: Logger) {
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
  }

  get mode(): 'smtp' | 'outbox' {
    return this.#transport ? 'smtp' : 'outbox';
  }

  async send(mail: OutgoingMail): Promise<void> {
    if (!this.#transport) {
      this.outbox.push({ ...mail, sentAt: new Date() });
      if (this.outbox.length > outboxSize) this.outbox.shift();
      // Messages carry sign-in codes: the log says one was "sent", never what it said — unless the operator
      // asked for the outbox to be printed (`mail.logOutbox`, for development without a mail server).
      if (this.#config.mail.logOutbox) this.#log.info({ mail: { to: mail.to, subject: mail.subject } }, `mail (no SMTP configured, development outbox): ${mail.text}`);
      else this.#log.info({ mail: { to: mail.to } }, 'mail kept in the development outbox (no SMTP configured; set mail.logOutbox to print it)');
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
