/**
 * Spend alerts as members and organisation admins use them (web page, REST, GraphQL, CLI): the thresholds
 * of each meter, email on or off, the webhook (URL, secret shown once, rotate, send a test), the delivery
 * log, and one's own notices. Whose alerts: the caller's own account, or an organisation they are an owner
 * or admin of (`organisationId`); the rules are in the authz table.
 */
import * as authz from '../../authz/authz.ts';
import type { Config } from '../../config/config.ts';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { SingleFlight } from '../../infra/single-flight.ts';
import type { Principal } from '../../authz/principal.ts';
import type { RateLimiter } from '../../rate-limit/rate-limit.service.ts';
import type { AlertDeliveries } from './alerts.delivery.ts';
import type { AlertEvents } from './alerts.events.ts';
import type { Meter, MeterSource } from './alerts.meter.ts';
import { alertEvent, type AlertMonitor } from './alerts.monitor.ts';
import type { AlertStore, DeliveryRow, NoticeRow } from './alerts.store.ts';
import { checkWebhookUrl, newWebhookSecret } from './alerts.webhook.ts';

export interface MeterSetting {
  meter: Meter;
  thresholds: number[];
  /** False while the meter uses the default thresholds. */
  custom: boolean;
}

export interface AlertSettings {
  accountId: string;
  defaultThresholds: number[];
  meters: MeterSetting[];
  emailEnabled: boolean;
  /** Null when no webhook is set; the secret itself is only ever returned by the call that made it. */
  webhook: { url: string; secretHint: string; updatedAt: Date | null } | null;
}

export interface NoticeList {
  unread: number;
  notices: NoticeRow[];
}

const MAX_THRESHOLDS = 5;
const personal = { read: 'alerts:read', manage: 'alerts:manage' } as const;
const organisational = { read: 'organisation:alerts:read', manage: 'organisation:alerts:manage' } as const;

export class AlertService {
  readonly #config: Config;
  readonly #store: AlertStore;
  readonly #sources: MeterSource[];
  readonly #monitor: AlertMonitor;
  readonly #deliveries: AlertDeliveries;
  readonly #roles: authz.OrganisationRoleLookup;
  readonly #rateLimits: RateLimiter;
  readonly #noticeLists = new SingleFlight<NoticeList>();
  readonly events: AlertEvents;

  constructor(
    config: Config,
    deps: { store: AlertStore; sources: MeterSource[]; monitor: AlertMonitor; deliveries: AlertDeliveries; roles: authz.OrganisationRoleLookup; rateLimits: RateLimiter; events: AlertEvents },
  ) {
    this.#config = config;
    this.#store = deps.store;
    this.#sources = deps.sources;
    this.#monitor = deps.monitor;
    this.#deliveries = deps.deliveries;
    this.#roles = deps.roles;
    this.#rateLimits = deps.rateLimits;
    this.events = deps.events;
  }

  /** Whose alerts the caller means: their own, or an organisation's they may read or manage them for. */
  async #account(actor: authz.Actor, organisationId: string | null | undefined, access: 'read' | 'manage'): Promise<{ actor: Principal; accountId: string }> {
    authz.assert(actor, personal[access]);
    if (!organisationId) return { actor, accountId: actor.accountId };
    const role = await this.#roles.roleOf(actor.accountId, organisationId);
    if (role === null) {
      throw new AppError('not_found', bilingual('No organisation {id} that you belong to.', '没有您所属的组织 {id}。', { id: organisationId.slice(0, 64) }), { param: 'organisationId' });
    }
    authz.assert(actor, organisational[access], { type: 'organisation', id: organisationId, membership: role });
    return { actor, accountId: organisationId };
  }

  async settings(actor: authz.Actor, organisationId?: string | null): Promise<AlertSettings> {
    const { accountId } = await this.#account(actor, organisationId, 'read');
    return this.#settingsOf(accountId);
  }

  async #settingsOf(accountId: string): Promise<AlertSettings> {
    const [chosen, channels, meters] = await Promise.all([
      this.#store.thresholds(accountId),
      this.#store.channels(accountId),
      Promise.all(this.#sources.map((source) => source.meters(accountId))).then((lists) => lists.flat()),
    ]);
    const defaults = this.#config.alerts.defaultThresholds;
    return {
      accountId,
      defaultThresholds: [...defaults],
      meters: meters.map((meter) => ({ meter, thresholds: chosen.get(meter.id) ?? [...defaults], custom: chosen.has(meter.id) })),
      emailEnabled: channels.emailEnabled,
      webhook: channels.webhookUrl && channels.webhookSecret ? { url: channels.webhookUrl, secretHint: hint(channels.webhookSecret), updatedAt: channels.updatedAt } : null,
    };
  }

  /** Sets a meter's thresholds (whole percentages 1–100, at most 5; none turns its alerts off). */
  async setThresholds(actor: authz.Actor, input: { organisationId?: string | null; meter: string; thresholds: readonly number[] }): Promise<AlertSettings> {
    const { accountId } = await this.#account(actor, input.organisationId, 'manage');
    const accepted = await Promise.all(this.#sources.map((source) => source.accepts(accountId, input.meter)));
    if (!accepted.includes(true)) {
      throw new AppError('invalid_request', bilingual('There is no meter {meter}; use one of the ids the alert settings list (e.g. pool:fast:day, or key:<key id>:day for a key of yours).', '没有计量项 {meter}；请使用提醒设置中列出的 id（例如 pool:fast:day，或您的密钥的 key:<密钥 id>:day）。', { meter: input.meter.slice(0, 100) }), { param: 'meter' });
    }
    const thresholds = [...new Set(input.thresholds)].sort((a, b) => a - b);
    if (thresholds.some((t) => !Number.isInteger(t) || t < 1 || t > 100)) {
      throw new AppError('invalid_request', bilingual('Thresholds are whole percentages from 1 to 100.', '阈值必须是 1 到 100 之间的整数百分比。'), { param: 'thresholds' });
    }
    if (thresholds.length > MAX_THRESHOLDS) {
      throw new AppError('invalid_request', bilingual('At most {max} thresholds per meter.', '每个计量项最多 {max} 个阈值。', { max: MAX_THRESHOLDS }), { param: 'thresholds' });
    }
    await this.#store.setThresholds(accountId, input.meter, thresholds);
    this.#monitor.forget(accountId);
    return this.#settingsOf(accountId);
  }

  async setEmail(actor: authz.Actor, input: { organisationId?: string | null; enabled: boolean }): Promise<AlertSettings> {
    const { accountId } = await this.#account(actor, input.organisationId, 'manage');
    const channels = await this.#store.channels(accountId);
    await this.#store.setChannels(accountId, { ...channels, emailEnabled: input.enabled });
    return this.#settingsOf(accountId);
  }

  /**
   * Sets the webhook URL (null removes the webhook). A new webhook gets a new secret, and `rotateSecret`
   * replaces it; the secret is in the answer only then.
   */
  async setWebhook(actor: authz.Actor, input: { organisationId?: string | null; url: string | null; rotateSecret?: boolean }): Promise<{ settings: AlertSettings; secret: string | null }> {
    const { accountId } = await this.#account(actor, input.organisationId, 'manage');
    const channels = await this.#store.channels(accountId);
    if (input.url === null || input.url.trim() === '') {
      await this.#store.setChannels(accountId, { ...channels, webhookUrl: null, webhookSecret: null });
      return { settings: await this.#settingsOf(accountId), secret: null };
    }
    const url = checkWebhookUrl(input.url, this.#config.server.production);
    const secret = !channels.webhookSecret || input.rotateSecret ? newWebhookSecret() : null;
    await this.#store.setChannels(accountId, { ...channels, webhookUrl: url, webhookSecret: secret ?? channels.webhookSecret });
    return { settings: await this.#settingsOf(accountId), secret };
  }

  /**
   * Sends a test event to the webhook now and returns its delivery once it has been answered (or after the
   * webhook timeout). Ten a minute per account.
   */
  async sendTest(actor: authz.Actor, organisationId?: string | null): Promise<DeliveryRow> {
    const { accountId } = await this.#account(actor, organisationId, 'manage');
    const channels = await this.#store.channels(accountId);
    if (!channels.webhookUrl) throw new AppError('invalid_request', bilingual('Set a webhook URL before sending a test.', '请先设置 Webhook 地址再发送测试。'), { param: 'url' });
    const allowed = await this.#rateLimits.hit([{ key: `alerts:test:${accountId}`, limit: 10, periodMs: 60_000 }]);
    if (!allowed.allowed) throw new AppError('rate_limited', bilingual('Too many test webhooks; try again in a minute.', '测试 Webhook 发送过于频繁，请一分钟后再试。'), { headers: { 'retry-after': '60' } });
    const meters = (await Promise.all(this.#sources.map((source) => source.meters(accountId)))).flat();
    const meter = meters[0]!;
    const id = await this.#store.enqueue(accountId, { channel: 'webhook', target: channels.webhookUrl, payload: alertEvent(accountId, meter, 80, this.#config.currency, true), test: true });
    this.#deliveries.wake();
    const deadline = Date.now() + this.#config.alerts.webhook.timeoutSeconds * 1000 + 5_000;
    for (;;) {
      const delivery = (await this.#store.delivery(id))!;
      if (delivery.state !== 'pending' || Date.now() > deadline) return delivery;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async deliveries(actor: authz.Actor, input: { organisationId?: string | null; first?: number | null }): Promise<DeliveryRow[]> {
    const { accountId } = await this.#account(actor, input.organisationId, 'read');
    const first = input.first ?? 50;
    if (!Number.isInteger(first) || first < 1 || first > 200) throw new AppError('invalid_request', bilingual('first must be from 1 to 200.', 'first 必须在 1 到 200 之间。'), { param: 'first' });
    return this.#store.deliveries(accountId, first);
  }

  /**
   * The caller's own notices (about their account and the organisations they administer), newest first.
   * With an `alertNoticesUpdated` wake-up's generation, the read is shared with the account's other
   * subscriptions woken with it (`SingleFlight`).
   */
  async notices(actor: authz.Actor, generation?: number): Promise<NoticeList> {
    authz.assert(actor, 'alerts:read');
    const { accountId } = actor;
    return this.#noticeLists.run(accountId, generation, async () => {
      const [unread, notices] = await Promise.all([this.#store.unread(accountId), this.#store.notices(accountId, 20)]);
      return { unread, notices };
    });
  }

  async markNoticesRead(actor: authz.Actor): Promise<NoticeList> {
    authz.assert(actor, 'alerts:read');
    const marked = await this.#store.markRead(actor.accountId);
    if (marked > 0) this.events.changed([actor.accountId]);
    return this.notices(actor);
  }
}

/** `whsec_…` and the last four characters: enough to tell secrets apart, not to use one. */
function hint(secret: string): string {
  return `whsec_…${secret.slice(-4)}`;
}
