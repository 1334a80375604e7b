import type { FastifyInstance } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { objectBody } from '../../http/body.ts';
import { route } from '../../http/route-access.ts';
import type { Meter } from './alerts.meter.ts';
import type { AlertSettings } from './alerts.service.ts';
import type { DeliveryRow, NoticeRow } from './alerts.store.ts';

/**
 * Spend alerts over REST (the same service as GraphQL `alertSettings`, `setAlertThresholds`,
 * `setAlertWebhook`, `sendTestAlert`, `alertDeliveries`, `alertNotices`). `organisationId` (query or body)
 * names an organisation you administer; without it, your own account.
 */
export async function alertRoutes(app: FastifyInstance): Promise<void> {
  const base = '/api/membership/alerts';
  const { services } = app;
  const currency = services.config.currency;

  app.get<{ Querystring: { organisationId?: string } }>(base, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const settings = await services.alerts.settings(request.principal, request.query.organisationId ?? null);
    return { ok: true, settings: serializeSettings(settings, currency) };
  });

  app.put(`${base}/thresholds`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const body = objectBody(request);
    const thresholds = body.thresholds;
    if (!Array.isArray(thresholds) || thresholds.some((t) => typeof t !== 'number')) {
      throw new AppError('invalid_request', bilingual('thresholds must be an array of percentages, e.g. [80, 100].', 'thresholds 必须是百分比数组，例如 [80, 100]。'), { param: 'thresholds' });
    }
    const settings = await services.alerts.setThresholds(request.principal, { organisationId: optionalString(body, 'organisationId'), meter: optionalString(body, 'meter') ?? '', thresholds: thresholds as number[] });
    return { ok: true, settings: serializeSettings(settings, currency) };
  });

  app.put(`${base}/email`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const body = objectBody(request);
    if (typeof body.enabled !== 'boolean') throw new AppError('invalid_request', bilingual('enabled must be true or false.', 'enabled 必须是 true 或 false。'), { param: 'enabled' });
    const settings = await services.alerts.setEmail(request.principal, { organisationId: optionalString(body, 'organisationId'), enabled: body.enabled });
    return { ok: true, settings: serializeSettings(settings, currency) };
  });

  /** `{url, rotateSecret?}`; `url: null` removes the webhook. The answer's `secret` is set only when this call made one. */
  app.put(`${base}/webhook`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const body = objectBody(request);
    if (body.rotateSecret !== undefined && typeof body.rotateSecret !== 'boolean') {
      throw new AppError('invalid_request', bilingual('rotateSecret must be true or false.', 'rotateSecret 必须是 true 或 false。'), { param: 'rotateSecret' });
    }
    const result = await services.alerts.setWebhook(request.principal, { organisationId: optionalString(body, 'organisationId'), url: optionalString(body, 'url'), rotateSecret: body.rotateSecret === true });
    return { ok: true, settings: serializeSettings(result.settings, currency), secret: result.secret };
  });

  app.post(`${base}/webhook/test`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const delivery = await services.alerts.sendTest(request.principal, optionalString(objectBody(request), 'organisationId'));
    return { ok: true, delivery: serializeDelivery(delivery) };
  });

  app.get<{ Querystring: { organisationId?: string; first?: string } }>(`${base}/deliveries`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const first = request.query.first === undefined ? null : Number(request.query.first);
    const deliveries = await services.alerts.deliveries(request.principal, { organisationId: request.query.organisationId ?? null, first });
    return { ok: true, deliveries: deliveries.map(serializeDelivery) };
  });

  app.get(`${base}/notices`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const list = await services.alerts.notices(request.principal);
    return { ok: true, unread: list.unread, notices: list.notices.map(serializeNotice) };
  });

  app.post(`${base}/notices/read`, route({ auth: 'signed-in', cache: 'no-store' }), async (request) => {
    const list = await services.alerts.markNoticesRead(request.principal);
    return { ok: true, unread: list.unread, notices: list.notices.map(serializeNotice) };
  });
}

function optionalString(body: Record<string, unknown>, name: string): string | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new AppError('invalid_request', bilingual('{name} must be a string.', '{name} 必须是字符串。', { name }), { param: name });
  return value;
}

const amount = (micros: number, currency: string) => ({ amountMicros: micros, currency });

function serializeMeter(meter: Meter, currency: string) {
  return {
    id: meter.id,
    kind: meter.kind,
    window: meter.window,
    windowKey: meter.windowKey,
    label: meter.label.en,
    labelZh: meter.label.zh,
    used: amount(meter.usedMicros, currency),
    limit: amount(meter.limitMicros, currency),
    resetsAt: meter.resetsAt.toISOString(),
  };
}

function serializeSettings(settings: AlertSettings, currency: string) {
  return {
    ...settings,
    meters: settings.meters.map((setting) => ({ ...setting, meter: serializeMeter(setting.meter, currency) })),
    webhook: settings.webhook && { ...settings.webhook, updatedAt: settings.webhook.updatedAt?.toISOString() ?? null },
  };
}

function serializeDelivery(delivery: DeliveryRow) {
  return {
    ...delivery,
    nextAttemptAt: delivery.state === 'pending' ? delivery.nextAttemptAt.toISOString() : null,
    createdAt: delivery.createdAt.toISOString(),
    finishedAt: delivery.finishedAt?.toISOString() ?? null,
  };
}

function serializeNotice(notice: NoticeRow) {
  return {
    ...notice,
    used: amount(notice.usedMicros, notice.currency),
    limit: amount(notice.limitMicros, notice.currency),
    resetsAt: notice.resetsAt.toISOString(),
    createdAt: notice.createdAt.toISOString(),
    readAt: notice.readAt?.toISOString() ?? null,
  };
}
