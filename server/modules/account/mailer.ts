/**
 * Outgoing mail. With `mail.smtp` configured, nodemailer sends over SMTP; otherwise each message is written
 * to the log and kept in a small in-memory development outbox (tests and local setups read codes there).
 */
import nodemailer, { type Transporter } from 'nodemailer';
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
      ? nodemailer.createTransport({
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
      this.#log.info({ mail: { to: mail.to, subject: mail.subject } }, `mail (no SMTP configured, development outbox): ${mail.text}`);
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
