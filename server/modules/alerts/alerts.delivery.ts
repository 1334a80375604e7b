/**
 * The delivery queue's worker: emails and webhooks of alerts, each a row in `alert_delivery` until it is
 * delivered or given up. Every instance runs the loop (every `alerts.pollSeconds`, and at once when it
 * queued something): a round takes due rows with `FOR UPDATE SKIP LOCKED` and locks each for a lease, so
 * instances share the work and no row is sent by two at once; a row whose instance died mid-send is taken
 * again when its lease ends. A failed attempt is retried after backoff × 2^(attempt − 1) until
 * `webhook.retryHours` after it was queued; every attempt's answer (status, latency, the start of the
 * body) is kept on the row for the alerts page.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config/config.ts';
import type { Mailer } from '../account/mailer.ts';
import type { AlertStore, DeliveryAttempt, DeliveryRow } from './alerts.store.ts';
import { postWebhook } from './alerts.webhook.ts';

const BATCH = 20;

export class AlertDeliveries {
  readonly #config: Config;
  readonly #store: AlertStore;
  readonly #mailer: Mailer;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #closed = false;

  constructor(config: Config, deps: { store: AlertStore; mailer: Mailer; log: Logger }) {
    this.#config = config;
    this.#store = deps.store;
    this.#mailer = deps.mailer;
    this.#log = deps.log;
  }

  start(): void {
    if (this.#timer || this.#closed) return;
    this.#timer = setInterval(() => this.wake(), this.#config.alerts.pollSeconds * 1000).unref();
  }

  /** Runs a round now (or right after the one running). */
  wake(): void {
    if (this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#loop().finally(() => (this.#running = null));
  }

  /** Sends what is due now until nothing is (tests; the timer calls `wake`). Returns how many attempts were made. */
  async runOnce(): Promise<number> {
    const due = await this.#store.takeDue(BATCH, this.#leaseMs());
    await Promise.all(due.map((delivery) => this.#attempt(delivery)));
    return due.length;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  async #loop(): Promise<void> {
    do {
      this.#again = false;
      try {
        while (!this.#closed && (await this.runOnce()) === BATCH);
      } catch (error) {
        this.#log.warn({ err: (error as Error).message }, 'spend alerts: delivery round failed');
      }
    } while (this.#again && !this.#closed);
  }

  /** Longer than any one attempt can take, so a live instance's row is never taken from it. */
  #leaseMs(): number {
    return Math.max(60_000, this.#config.alerts.webhook.timeoutSeconds * 3000);
  }

  async #attempt(delivery: DeliveryRow): Promise<void> {
    const started = performance.now();
    let attempt: DeliveryAttempt;
    let permanent = false;
    if (delivery.channel === 'email') {
      const mail = delivery.payload as { to: string; subject: string; text: string };
      try {
        await this.#mailer.send(mail);
        attempt = { at: new Date().toISOString(), attempt: delivery.attempts, status: null, latencyMs: Math.round(performance.now() - started), response: null, error: null };
      } catch (error) {
        attempt = { at: new Date().toISOString(), attempt: delivery.attempts, status: null, latencyMs: Math.round(performance.now() - started), response: null, error: (error as Error).message.slice(0, 500) };
      }
    } else {
      // The account's current URL and secret: a rotated secret signs retries too, a removed webhook stops them.
      const channels = await this.#store.channels(delivery.accountId);
      if (!channels.webhookUrl || !channels.webhookSecret) {
        attempt = { at: new Date().toISOString(), attempt: delivery.attempts, status: null, latencyMs: 0, response: null, error: 'the webhook was removed' };
        permanent = true;
      } else {
        const answer = await postWebhook({
          url: channels.webhookUrl,
          secret: channels.webhookSecret,
          deliveryId: delivery.id,
          body: JSON.stringify(delivery.payload),
          timeoutMs: this.#config.alerts.webhook.timeoutSeconds * 1000,
          production: this.#config.server.production,
        });
        attempt = { at: new Date().toISOString(), attempt: delivery.attempts, status: answer.status, latencyMs: answer.latencyMs, response: answer.response, error: answer.ok ? null : answer.error };
        permanent = answer.permanent;
      }
    }
    const delivered = attempt.error === null;
    const { backoffSeconds, retryHours } = this.#config.alerts.webhook;
    // A test delivery is tried once: its answer is what the member asked to see.
    const retryInMs = delivered || permanent || delivery.test ? null : backoffSeconds * 1000 * 2 ** Math.min(delivery.attempts - 1, 20);
    const state = await this.#store.finishAttempt(delivery.id, attempt, { delivered, retryInMs, giveUpAfterMs: retryHours * 3_600_000 });
    // A short backoff (tests, or a first retry) need not wait for the next poll.
    if (state === 'pending' && retryInMs !== null && retryInMs < this.#config.alerts.pollSeconds * 1000) setTimeout(() => this.wake(), retryInMs + 5).unref();
    if (!delivered) this.#log.warn({ deliveryId: delivery.id, channel: delivery.channel, attempt: delivery.attempts, state, error: attempt.error }, 'spend alert delivery failed');
  }
}
