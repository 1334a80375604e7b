/**
 * Finds thresholds crossed and claims each once. It listens to the usage rounds this instance publishes
 * (`UsageEvents.onRound`: the payers whose pools it admitted or settled, already coalesced), so nothing is
 * added to admission or settlement, and each payer's move is looked at by the instance that made it.
 *
 * For each payer: read its meters (the pool counters: cheap) and the thresholds it chose; for a threshold
 * that looks crossed and was not claimed yet in this window, confirm it against the ledger (settled spend:
 * a running reservation that is refunded must not announce 100 %), then claim it. The claim is a row whose
 * primary key is (account, meter, threshold, window) inserted with `on conflict do nothing`: of any number
 * of instances crossing together, exactly one inserts it and queues the alert — email per recipient, a
 * notice per recipient, and the webhook if one is set — in the same transaction.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config/config.ts';
import { formatMicros } from '../../config/money.ts';
import { isLocale } from '../../i18n/locale.ts';
import type { AlertEvents } from './alerts.events.ts';
import { alertMail } from './alerts.mail.ts';
import type { Meter, MeterSource } from './alerts.meter.ts';
import type { AlertStore, NewDelivery } from './alerts.store.ts';

/** How long an instance trusts the thresholds it read for a payer (a change made on this instance applies at once). */
const SETTINGS_TTL_MS = 10_000;
/** Claims this instance remembers, so a payer past 80 % does not cost an insert on every round. */
const MAX_REMEMBERED = 100_000;

export interface AlertEvent {
  id: string;
  type: 'alert.threshold_crossed' | 'alert.test';
  createdAt: string;
  test: boolean;
  data: {
    accountId: string;
    meter: string;
    kind: string;
    window: string;
    windowKey: string;
    threshold: number;
    used: { amountMicros: number; amount: string; currency: string };
    limit: { amountMicros: number; amount: string; currency: string };
    resetsAt: string;
  };
}

export class AlertMonitor {
  readonly #config: Config;
  readonly #store: AlertStore;
  readonly #sources: MeterSource[];
  readonly #events: AlertEvents;
  readonly #queued: () => void;
  readonly #log: Logger;
  readonly #claimed = new Set<string>();
  readonly #settings = new Map<string, { thresholds: Map<string, number[]>; at: number }>();
  readonly #dirty = new Set<string>();
  #draining: Promise<void> | null = null;
  #closed = false;

  constructor(config: Config, deps: { store: AlertStore; sources: MeterSource[]; events: AlertEvents; queued: () => void; log: Logger }) {
    this.#config = config;
    this.#store = deps.store;
    this.#sources = deps.sources;
    this.#events = deps.events;
    this.#queued = deps.queued;
    this.#log = deps.log;
  }

  /** The payers whose pools moved (a usage round): looked at soon, one payer at a time, never twice at once. */
  noteChanged(payerIds: readonly string[]): void {
    if (this.#closed) return;
    for (const id of payerIds) this.#dirty.add(id);
    this.#draining ??= this.#drain().finally(() => (this.#draining = null));
  }

  /** Forgets the thresholds read for an account (they were just changed here). */
  forget(accountId: string): void {
    this.#settings.delete(accountId);
  }

  /** Waits until every payer noted so far has been looked at (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.idle();
  }

  async #drain(): Promise<void> {
    while (this.#dirty.size > 0 && !this.#closed) {
      const batch = [...this.#dirty];
      this.#dirty.clear();
      for (const payerId of batch) {
        try {
          await this.evaluate(payerId);
        } catch (error) {
          this.#log.warn({ err: (error as Error).message, payerId }, 'spend alerts: could not check a payer');
        }
      }
    }
  }

  /** Checks one payer's meters now; returns the alerts this call claimed. */
  async evaluate(payerId: string): Promise<number> {
    const thresholds = await this.#thresholdsOf(payerId);
    let claimed = 0;
    for (const source of this.#sources) {
      const meters = await source.meters(payerId);
      const candidates = meters.flatMap((meter) =>
        (thresholds.get(meter.id) ?? this.#config.alerts.defaultThresholds)
          .filter((threshold) => crossed(meter.usedMicros, meter.limitMicros, threshold) && !this.#claimed.has(claimKey(payerId, meter, threshold)))
          .map((threshold) => ({ meter, threshold })),
      );
      if (candidates.length === 0) continue;
      const settled = await source.settled(payerId, [...new Set(candidates.map((c) => c.meter))]);
      for (const { meter, threshold } of candidates) {
        const used = settled.get(meter.id) ?? 0;
        if (!crossed(used, meter.limitMicros, threshold)) continue;
        if (await this.#claim(payerId, { ...meter, usedMicros: used }, threshold)) claimed += 1;
      }
    }
    return claimed;
  }

  async #claim(payerId: string, meter: Meter, threshold: number): Promise<boolean> {
    const currency = this.#config.currency;
    const result = await this.#store.claim(
      { accountId: payerId, meter: meter.id, threshold, windowKey: meter.windowKey, usedMicros: meter.usedMicros, limitMicros: meter.limitMicros, currency, resetsAt: meter.resetsAt },
      async (tx) => {
        const { kind, name, recipients } = await this.#store.recipients(payerId, tx);
        const channels = await this.#store.channels(payerId);
        const deliveries: NewDelivery[] = [];
        if (channels.emailEnabled) {
          for (const recipient of recipients) {
            const locale = isLocale(recipient.locale) ? recipient.locale : 'en';
            const mail = alertMail[locale]({
              threshold,
              kind: meter.kind,
              meter: meter.label,
              used: `${currency} ${formatMicros(meter.usedMicros)}`,
              limit: `${currency} ${formatMicros(meter.limitMicros)}`,
              organisation: kind === 'organisation' ? name : null,
              resetsAt: meter.resetsAt,
              timeZone: this.#config.timezone,
              alertsUrl: `${this.#config.server.webUrl}/account/alerts${kind === 'organisation' ? `?org=${payerId}` : ''}`,
            });
            deliveries.push({ channel: 'email', target: recipient.email, payload: { to: recipient.email, ...mail } });
          }
        }
        if (channels.webhookUrl) deliveries.push({ channel: 'webhook', target: channels.webhookUrl, payload: alertEvent(payerId, meter, threshold, currency, false) });
        return { notices: recipients.map((recipient) => recipient.id), deliveries };
      },
    );
    this.#remember(claimKey(payerId, meter, threshold));
    if (!result.won) return false;
    this.#log.info({ payerId, meter: meter.id, threshold, windowKey: meter.windowKey }, 'spend alert claimed');
    this.#events.changed(result.recipients);
    if (result.deliveries > 0) this.#queued();
    return true;
  }

  #remember(key: string): void {
    if (this.#claimed.size >= MAX_REMEMBERED) this.#claimed.clear();
    this.#claimed.add(key);
  }

  async #thresholdsOf(accountId: string): Promise<Map<string, number[]>> {
    const cached = this.#settings.get(accountId);
    if (cached && Date.now() - cached.at < SETTINGS_TTL_MS) return cached.thresholds;
    const thresholds = await this.#store.thresholds(accountId);
    if (this.#settings.size >= MAX_REMEMBERED) this.#settings.clear();
    this.#settings.set(accountId, { thresholds, at: Date.now() });
    return thresholds;
  }
}

function crossed(usedMicros: number, limitMicros: number, threshold: number): boolean {
  // Integers only: used × 100 ≥ threshold × limit. A pool of 0 has nothing to warn about.
  return limitMicros > 0 && usedMicros * 100 >= threshold * limitMicros;
}

function claimKey(payerId: string, meter: Meter, threshold: number): string {
  return `${payerId}|${meter.id}|${threshold}|${meter.windowKey}`;
}

/** The webhook body of an alert (and, with `test`, of the "send test" button). */
export function alertEvent(accountId: string, meter: Meter, threshold: number, currency: string, test: boolean): AlertEvent {
  const amount = (micros: number) => ({ amountMicros: micros, amount: formatMicros(micros), currency });
  return {
    id: `evt_${crypto.randomUUID().replaceAll('-', '')}`,
    type: test ? 'alert.test' : 'alert.threshold_crossed',
    createdAt: new Date().toISOString(),
    test,
    data: {
      accountId,
      meter: meter.id,
      kind: meter.kind,
      window: meter.window,
      windowKey: meter.windowKey,
      threshold,
      used: amount(meter.usedMicros),
      limit: amount(meter.limitMicros),
      resetsAt: meter.resetsAt.toISOString(),
    },
  };
}
