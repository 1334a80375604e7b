/**
 * Spend alerts end to end, on real PostgreSQL and Redis with two app instances: a member's pool crossing
 * 80 % and then 100 % sends exactly one alert of each on every channel — an email (the outbox), a notice
 * (received over graphql-ws on the other instance) and a signed webhook (received by a local HTTP server
 * and verified as the docs tell receivers to) — and nothing more however often the instances look; two
 * instances racing to claim one crossing send it once; a webhook that fails is retried with backoff until
 * it answers; "send test" posts a signed test event and returns its answer. A key's spend cap is a meter
 * too: crossing it, with both instances looking at once, sends one email, one notice and one webhook.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { defaultPlans } from '../../../server/config/catalogue.ts';
import { formatMicros } from '../../../server/config/money.ts';
import { settled, startApp, type TestApp } from '../../helpers/app.ts';
import { seed, type Person } from '../../helpers/seed.ts';
import { relaxedLimits, startHarness, type Harness } from '../gateway/harness.ts';

// Two requests that fill the fast day pool exactly: each reports the most usage svc accepts (the request's
// bytes as prompt tokens, max_tokens as completion tokens), so each costs exactly its reservation.
const first = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: 'alerts: first' }], max_tokens: 1000 };
const second = { model: 'svc-2.1-fast', messages: [{ role: 'user' as const, content: 'alerts: final' }], max_tokens: 100 };
const bytes = (params: object) => Buffer.byteLength(JSON.stringify(params));
// svc-2.1-fast at 70 % off: 42,000 / 84,000 micros per 1M input / output tokens.
const cost = (params: typeof first) => Math.ceil((bytes(params) * 42_000 + params.max_tokens * 84_000) / 1_000_000);
const dayLimit = cost(first) + cost(second);

const plans = {
  ...defaultPlans,
  free: {
    name: 'Free',
    requestsPerMinute: 100_000,
    pools: { fast: { day: formatMicros(dayLimit), week: 100, month: 100 }, premium: { day: 1, week: 5, month: 20 } },
    packages: [{ id: 'free', name: 'Free', price: 0, multiplier: 1 }],
  },
};
const alerts = { pollSeconds: 0.1, webhook: { backoffSeconds: 0.25, timeoutSeconds: 3 } };

interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
}

/** A webhook receiver: records every POST; answers with the statuses queued for its path (then 200). */
function receiver(): Promise<{ url: string; received: Received[]; answers: Map<string, number[]>; server: Server }> {
  const received: Received[] = [];
  const answers = new Map<string, number[]>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      received.push({ at: Date.now(), headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), path });
      const status = answers.get(path)?.shift() ?? 200;
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'thanks' : `not now (${status})`);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, answers, server })));
}

/** What a receiver does (docs/alerts.md): HMAC-SHA256(secret, timestamp + "." + raw body), compared in constant time, timestamp within 5 minutes. */
function verified(secret: string, delivery: Received): boolean {
  const timestamp = Number(delivery.headers['svc-timestamp']);
  const signature = String(delivery.headers['svc-signature'] ?? '');
  const expected = `v1=${createHmac('sha256', secret).update(`${timestamp}.${delivery.body}`).digest('hex')}`;
  const fresh = Math.abs(Date.now() / 1000 - timestamp) < 300;
  return fresh && signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
}

let h: Harness;
let b: TestApp;
let hook: Awaited<ReturnType<typeof receiver>>;
const usage = new Map<string, { prompt_tokens: number; completion_tokens: number }>([
  [first.messages[0]!.content, { prompt_tokens: bytes(first), completion_tokens: first.max_tokens }],
  [second.messages[0]!.content, { prompt_tokens: bytes(second), completion_tokens: second.max_tokens }],
]);

beforeAll(async () => {
  hook = await receiver();
  h = await startHarness({ config: { plans, alerts } });
  h.upstream.setScript((body) => {
    const messages = body.messages as { content: string }[];
    const override = usage.get(messages.at(-1)!.content);
    return override ? { usageOverride: override } : undefined;
  });
  b = await startApp(h.mode.config, { config: { ...relaxedLimits, plans, alerts }, env: { SVC_UPSTREAM_URL: h.upstream.url } });
});
afterAll(async () => {
  await b?.close();
  await h?.close();
  await new Promise((resolve) => hook?.server.close(resolve));
});

async function withWebhook(member: Person, path: string): Promise<string> {
  const result = await member.web.graphql<{ setAlertWebhook: { secret: string | null; settings: { webhook: { url: string; secretHint: string } } } }>(
    `mutation($url: String) { setAlertWebhook(url: $url) { secret settings { webhook { url secretHint } } } }`,
    { url: `${hook.url}${path}` },
  );
  expect(result.errors).toBeUndefined();
  const secret = result.data!.setAlertWebhook.secret!;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  expect(result.data!.setAlertWebhook.settings.webhook.secretHint).toBe(`whsec_…${secret.slice(-4)}`);
  return secret;
}

const mailsTo = (email: string) => [...h.app.app.services.mailer.outbox, ...b.app.services.mailer.outbox].filter((mail) => mail.to === email);
const hooksAt = (path: string) => hook.received.filter((delivery) => delivery.path === path);

async function claimsOf(accountId: string): Promise<{ meter: string; threshold: number }[]> {
  const { rows } = await h.database.query('select meter, threshold from alert_claim where account_id = $1 order by threshold', [accountId]);
  return rows as { meter: string; threshold: number }[];
}

function wsClient(app: TestApp, key: string): Client {
  return createClient({ url: `${app.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false, onNonLazyError: () => undefined, connectionParams: { authorization: `Bearer ${key}` } });
}

interface NoticesEvent {
  alertNoticesUpdated: { unread: number; notices: { meter: string; threshold: number; used: { amountMicros: number }; limit: { amountMicros: number } }[] };
}

describe('spend alerts', () => {
  it('sends one email, one live notice and one signed webhook at 80 % and again at 100 %, and no more', async () => {
    const member = await seed(h.app).member({ tag: 'alerts' });
    const { client } = await member.withKey();
    const key = await member.key('watcher');
    const secret = await withWebhook(member, '/crossing');

    // The notice arrives live on the other instance.
    const ws = wsClient(b, key);
    const events = ws.iterate<NoticesEvent>({ query: 'subscription { alertNoticesUpdated { unread notices { meter threshold used { amountMicros } limit { amountMicros } } } }' })[Symbol.asyncIterator]();
    try {
      const initial = await events.next();
      expect(initial.value.data!.alertNoticesUpdated).toEqual({ unread: 0, notices: [] });

      await client.chat.completions.create(first);
      const at80 = await events.next();
      expect(at80.value.data!.alertNoticesUpdated.unread).toBe(1);
      expect(at80.value.data!.alertNoticesUpdated.notices[0]).toEqual({ meter: 'pool:fast:day', threshold: 80, used: { amountMicros: cost(first) }, limit: { amountMicros: dayLimit } });
      await vi.waitFor(() => expect(hooksAt('/crossing')).toHaveLength(1), { timeout: 5000, interval: 25 });
      await vi.waitFor(() => expect(mailsTo(member.email)).toHaveLength(1), { timeout: 5000, interval: 25 });

      await client.chat.completions.create(second);
      const at100 = await events.next();
      expect(at100.value.data!.alertNoticesUpdated.unread).toBe(2);
      expect(at100.value.data!.alertNoticesUpdated.notices.map((notice: { threshold: number }) => notice.threshold)).toEqual([100, 80]);
      expect(at100.value.data!.alertNoticesUpdated.notices[0]!.used.amountMicros).toBe(dayLimit);
      await vi.waitFor(() => expect(hooksAt('/crossing')).toHaveLength(2), { timeout: 5000, interval: 25 });
      await vi.waitFor(() => expect(mailsTo(member.email)).toHaveLength(2), { timeout: 5000, interval: 25 });
    } finally {
      await events.return?.();
      await ws.dispose();
    }

    // Looking again, on both instances, finds nothing new to send.
    await settled(h.app, b);
    const again = await Promise.all([h.app.app.services.alertMonitor.evaluate(member.id), b.app.services.alertMonitor.evaluate(member.id)]);
    expect(again).toEqual([0, 0]);
    await Promise.all([h.app.app.services.alertDeliveries.runOnce(), b.app.services.alertDeliveries.runOnce()]);
    expect(await claimsOf(member.id)).toEqual([
      { meter: 'pool:fast:day', threshold: 80 },
      { meter: 'pool:fast:day', threshold: 100 },
    ]);
    expect(hooksAt('/crossing')).toHaveLength(2);
    expect(mailsTo(member.email)).toHaveLength(2);

    // The webhooks: signed (verified as a receiver would), the body names the crossing.
    const bodies = hooksAt('/crossing').map((delivery) => {
      expect(verified(secret, delivery)).toBe(true);
      expect(verified('whsec_wrong', delivery)).toBe(false);
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['svc-webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
      return JSON.parse(delivery.body) as { type: string; test: boolean; data: { accountId: string; meter: string; threshold: number; used: { amountMicros: number }; limit: { amountMicros: number }; windowKey: string } };
    });
    expect(bodies.map((body) => [body.type, body.test, body.data.meter, body.data.threshold])).toEqual([
      ['alert.threshold_crossed', false, 'pool:fast:day', 80],
      ['alert.threshold_crossed', false, 'pool:fast:day', 100],
    ]);
    expect(bodies[1]!.data).toMatchObject({ accountId: member.id, used: { amountMicros: dayLimit }, limit: { amountMicros: dayLimit } });
    expect(bodies[0]!.data.windowKey).toMatch(/^d\d{4}-\d{2}-\d{2}$/);

    // The emails, in English (the account has no language set).
    // Two instances' outboxes: which sent which depends on who looked first, so each mail is found by its threshold.
    const mail80 = mailsTo(member.email).find((mail) => mail.subject.includes(' 80%'));
    const mail100 = mailsTo(member.email).find((mail) => mail.subject.includes(' 100%'));
    expect(mail80!.subject).toBe('svc: 80% of your Fast models, daily allowance used');
    expect(mail80!.text).toContain(`Used: USD ${formatMicros(cost(first))} of USD ${formatMicros(dayLimit)}`);
    expect(mail100!.subject).toBe('svc: 100% of your Fast models, daily allowance used');
    expect(mail100!.text).toContain('refused (402)');

    // The page's delivery log: both webhooks and both emails, delivered on the first try, with the answer.
    const log = await member.web.graphql<{ alertDeliveries: { channel: string; state: string; attempts: number; lastStatus: number | null; lastResponse: string | null; history: { status: number | null }[] }[] }>(
      '{ alertDeliveries { channel state attempts lastStatus lastResponse history { status } } }',
    );
    expect(log.errors).toBeUndefined();
    const webhooks = log.data!.alertDeliveries.filter((delivery) => delivery.channel === 'webhook');
    expect(webhooks).toHaveLength(2);
    for (const delivery of webhooks) expect(delivery).toMatchObject({ state: 'delivered', attempts: 1, lastStatus: 200, lastResponse: 'thanks', history: [{ status: 200 }] });
    expect(log.data!.alertDeliveries.filter((delivery) => delivery.channel === 'email').map((delivery) => delivery.state)).toEqual(['delivered', 'delivered']);

    // REST says the same; marking read clears the badge.
    const notices = await (await member.web.fetch('/api/membership/alerts/notices')).json();
    expect(notices).toMatchObject({ ok: true, unread: 2, notices: [{ threshold: 100 }, { threshold: 80 }] });
    const read = await (await member.web.fetch('/api/membership/alerts/notices/read', { method: 'POST', body: {} })).json();
    expect(read).toMatchObject({ ok: true, unread: 0 });
  });

  it('sends one alert when two instances claim the same crossing at once (in the account language)', async () => {
    const member = await seed(h.app).member({ tag: 'alerts-race' });
    await h.database.query(`update account set locale = 'zh-CN' where id = $1`, [member.id]);
    const secret = await withWebhook(member, '/race');
    const { key } = await member.withKey();
    // The crossing request goes through instance B; then both instances look at once, many times each.
    const onB = (await import('openai')).default;
    await new onB({ apiKey: key, baseURL: `${b.url}/v1`, maxRetries: 0 }).chat.completions.create(first);
    await settled(h.app, b);
    const claims = await Promise.all(Array.from({ length: 16 }, (_, i) => [h.app, b][i % 2]!.app.services.alertMonitor.evaluate(member.id)));
    await Promise.all([h.app.app.services.alertMonitor.idle(), b.app.services.alertMonitor.idle()]);
    expect(claims.reduce((sum, n) => sum + n, 0)).toBeLessThanOrEqual(1);
    expect(await claimsOf(member.id)).toEqual([{ meter: 'pool:fast:day', threshold: 80 }]);

    await vi.waitFor(() => expect(hooksAt('/race')).toHaveLength(1), { timeout: 5000, interval: 25 });
    await vi.waitFor(() => expect(mailsTo(member.email)).toHaveLength(1), { timeout: 5000, interval: 25 });
    await Promise.all([h.app.app.services.alertDeliveries.runOnce(), b.app.services.alertDeliveries.runOnce()]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hooksAt('/race')).toHaveLength(1);
    expect(verified(secret, hooksAt('/race')[0]!)).toBe(true);
    expect(mailsTo(member.email)).toHaveLength(1);
    expect(mailsTo(member.email)[0]!.subject).toBe('svc：快速模型，每日额度已使用 80%');
    const { rows } = await h.database.query('select count(*)::int as n from alert_notice where recipient_id = $1', [member.id]);
    expect(rows[0].n).toBe(1);
  });

  it("a key's spend cap is a meter: settable over REST and GraphQL, one alert per threshold when two instances look at once", async () => {
    const member = await seed(h.app).member({ tag: 'alerts-key' });
    const secret = await withWebhook(member, '/key');
    // The key's day cap equals the pool's, whose alerts this member turns off: only the key's alert fires.
    const off = await member.web.fetch('/api/membership/alerts/thresholds', { method: 'PUT', body: { meter: 'pool:fast:day', thresholds: [] } });
    expect(off.status).toBe(200);
    const created = await member.web.fetch('/api/membership/auth/api-keys', { body: { name: 'ci bot', budgetDay: formatMicros(dayLimit) } });
    expect(created.status).toBe(201);
    const { token, id: keyId, prefix } = (await created.json()) as { token: string; id: string; prefix: string };
    const meterId = `key:${keyId}:day`;

    // The settings list the cap as a meter; thresholds are set on it over GraphQL, and REST reads them back.
    const chosen = await member.web.graphql<{ setAlertThresholds: { meters: { thresholds: number[]; custom: boolean; meter: { id: string; kind: string; label: string; labelZh: string } }[] } }>(
      'mutation($meter: String!) { setAlertThresholds(meter: $meter, thresholds: [90, 50]) { meters { thresholds custom meter { id kind label labelZh } } } }',
      { meter: meterId },
    );
    expect(chosen.errors).toBeUndefined();
    expect(chosen.data!.setAlertThresholds.meters.find((m) => m.meter.id === meterId)).toEqual({
      thresholds: [50, 90],
      custom: true,
      meter: { id: meterId, kind: 'key', label: `API key “ci bot” (${prefix}…), daily cap`, labelZh: `API 密钥“ci bot”（${prefix}…），每日上限` },
    });
    const rest = await (await member.web.fetch('/api/membership/alerts')).json();
    expect(rest.settings.meters.map((m: { meter: { id: string } }) => m.meter.id)).toContain(meterId);
    // Someone else's key is no meter of this member's.
    const stranger = await seed(h.app).member({ tag: 'alerts-key-other' });
    const theirs = await stranger.web.fetch('/api/membership/alerts/thresholds', { method: 'PUT', body: { meter: meterId, thresholds: [80] } });
    expect(theirs.status).toBe(400);
    expect(await theirs.json()).toMatchObject({ code: 'invalid_request', error: { param: 'meter' } });

    // The first request (90 % of the cap's worth) goes through instance B; then both instances look, many times each.
    const OpenAI = (await import('openai')).default;
    await new OpenAI({ apiKey: token, baseURL: `${b.url}/v1`, maxRetries: 0 }).chat.completions.create(first);
    await settled(h.app, b);
    await Promise.all(Array.from({ length: 16 }, (_, i) => [h.app, b][i % 2]!.app.services.alertMonitor.evaluate(member.id)));
    await Promise.all([h.app.app.services.alertMonitor.idle(), b.app.services.alertMonitor.idle()]);
    const expected = [50, 90].filter((t) => cost(first) * 100 >= t * dayLimit);
    expect(expected.length).toBeGreaterThan(0);
    expect(await claimsOf(member.id)).toEqual(expected.map((threshold) => ({ meter: meterId, threshold })));

    await vi.waitFor(() => expect(hooksAt('/key')).toHaveLength(expected.length), { timeout: 5000, interval: 25 });
    await vi.waitFor(() => expect(mailsTo(member.email)).toHaveLength(expected.length), { timeout: 5000, interval: 25 });
    await Promise.all([h.app.app.services.alertDeliveries.runOnce(), b.app.services.alertDeliveries.runOnce()]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hooksAt('/key')).toHaveLength(expected.length);
    expect(mailsTo(member.email)).toHaveLength(expected.length);
    const body = JSON.parse(hooksAt('/key')[0]!.body) as { data: { meter: string; kind: string; window: string; limit: { amountMicros: number } } };
    expect(verified(secret, hooksAt('/key')[0]!)).toBe(true);
    expect(body.data).toMatchObject({ meter: meterId, kind: 'key', window: 'day', limit: { amountMicros: dayLimit } });
    const mail = mailsTo(member.email)[0]!;
    expect(mail.subject).toBe(`svc: ${expected[0]}% of API key “ci bot” (${prefix}…), daily cap used`);
    expect(mail.text).toContain(`Used: USD ${formatMicros(cost(first))} of USD ${formatMicros(dayLimit)}`);
    const { rows } = await h.database.query('select meter, threshold from alert_notice where recipient_id = $1 order by threshold', [member.id]);
    expect(rows).toEqual(expected.map((threshold) => ({ meter: meterId, threshold })));
  });

  it('retries a failing webhook with backoff until it answers 2xx, listing every answer', async () => {
    const member = await seed(h.app).member({ tag: 'alerts-retry' });
    const secret = await withWebhook(member, '/flaky');
    hook.answers.set('/flaky', [500, 503]);
    const { client } = await member.withKey();
    await client.chat.completions.create(first);

    await vi.waitFor(() => expect(hooksAt('/flaky')).toHaveLength(3), { timeout: 10_000, interval: 25 });
    const tries = hooksAt('/flaky');
    // The same delivery each time (receivers deduplicate on it), signed afresh, after 0.25 s then 0.5 s.
    expect(new Set(tries.map((t) => t.headers['svc-webhook-id'])).size).toBe(1);
    for (const attempt of tries) expect(verified(secret, attempt)).toBe(true);
    expect(tries[1]!.at - tries[0]!.at).toBeGreaterThanOrEqual(240);
    expect(tries[2]!.at - tries[1]!.at).toBeGreaterThanOrEqual(490);

    await vi.waitFor(
      async () => {
        const log = await (await member.web.fetch('/api/membership/alerts/deliveries')).json();
        const webhook = log.deliveries.find((delivery: { channel: string }) => delivery.channel === 'webhook');
        expect(webhook).toMatchObject({ state: 'delivered', attempts: 3, lastStatus: 200, lastError: null });
        expect(webhook.history.map((attempt: { status: number }) => attempt.status)).toEqual([500, 503, 200]);
        expect(webhook.history[0]).toMatchObject({ attempt: 1, error: 'HTTP 500', response: 'not now (500)' });
        expect(webhook.history[0].latencyMs).toBeGreaterThanOrEqual(0);
      },
      { timeout: 5000, interval: 50 },
    );
  });

  it('sends a signed test event on request, checks webhook URLs, and lets thresholds be chosen', async () => {
    const member = await seed(h.app).member({ tag: 'alerts-test' });
    const secret = await withWebhook(member, '/test');
    const test = await member.web.graphql<{ sendTestAlert: { state: string; test: boolean; lastStatus: number; lastLatencyMs: number } }>('mutation { sendTestAlert { state test lastStatus lastLatencyMs } }');
    expect(test.errors).toBeUndefined();
    expect(test.data!.sendTestAlert).toMatchObject({ state: 'delivered', test: true, lastStatus: 200 });
    expect(hooksAt('/test')).toHaveLength(1);
    expect(verified(secret, hooksAt('/test')[0]!)).toBe(true);
    expect(JSON.parse(hooksAt('/test')[0]!.body)).toMatchObject({ type: 'alert.test', test: true, data: { accountId: member.id } });

    // Rotating gives a new secret (shown once); the old one no longer verifies.
    const rotated = await member.web.graphql<{ setAlertWebhook: { secret: string } }>(`mutation($url: String) { setAlertWebhook(url: $url, rotateSecret: true) { secret } }`, { url: `${hook.url}/test` });
    const newSecret = rotated.data!.setAlertWebhook.secret;
    expect(newSecret).not.toBe(secret);
    const kept = await member.web.graphql<{ setAlertWebhook: { secret: string | null } }>(`mutation($url: String) { setAlertWebhook(url: $url) { secret } }`, { url: `${hook.url}/test` });
    expect(kept.data!.setAlertWebhook.secret).toBeNull();
    await member.web.graphql('mutation { sendTestAlert { state } }');
    expect(verified(newSecret, hooksAt('/test')[1]!)).toBe(true);
    expect(verified(secret, hooksAt('/test')[1]!)).toBe(false);

    // URLs svc will not call (SECURITY.md: outbound URLs), refused with the envelope's code.
    for (const url of ['http://example.com/hook', 'ftp://127.0.0.1/', 'https://169.254.169.254/latest', 'https://user:pw@example.com/', 'not a url']) {
      const refused = await member.web.fetch('/api/membership/alerts/webhook', { method: 'PUT', body: { url } });
      expect(refused.status, url).toBe(400);
      expect(await refused.json()).toMatchObject({ ok: false, code: 'invalid_request', error: { param: 'url' } });
    }

    // Thresholds: defaults, then chosen; bad ones refused; an API key may read but not change them.
    const settings = await (await member.web.fetch('/api/membership/alerts')).json();
    expect(settings.settings.defaultThresholds).toEqual([80, 100]);
    expect(settings.settings.meters).toHaveLength(6);
    expect(settings.settings.meters[0]).toMatchObject({ thresholds: [80, 100], custom: false, meter: { id: 'pool:fast:day', kind: 'pool', window: 'day', labelZh: '快速模型，每日' } });
    const set = await member.web.fetch('/api/membership/alerts/thresholds', { method: 'PUT', body: { meter: 'pool:premium:month', thresholds: [100, 50, 50] } });
    expect((await set.json()).settings.meters.find((m: { meter: { id: string } }) => m.meter.id === 'pool:premium:month')).toMatchObject({ thresholds: [50, 100], custom: true });
    const bad = await member.web.fetch('/api/membership/alerts/thresholds', { method: 'PUT', body: { meter: 'pool:fast:day', thresholds: [0, 120] } });
    expect(bad.status).toBe(400);
    const unknown = await member.web.graphql('mutation { setAlertThresholds(meter: "pool:gold:day", thresholds: [80]) { accountId } }');
    expect(unknown.errors?.[0]?.extensions?.code).toBe('invalid_request');
    const key = await member.key();
    const byKey = await fetch(`${h.app.url}/api/membership/alerts/thresholds`, { method: 'PUT', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ meter: 'pool:fast:day', thresholds: [50] }) });
    expect(byKey.status).toBe(401);
    const readByKey = await fetch(`${h.app.url}/api/membership/alerts`, { headers: { authorization: `Bearer ${key}` } });
    expect(readByKey.status).toBe(200);

    // Someone else's organisation is not found.
    const other = await member.web.graphql(`query($id: ID) { alertSettings(organisationId: $id) { accountId } }`, { id: crypto.randomUUID() });
    expect(other.errors?.[0]?.extensions?.code).toBe('not_found');
  });
});
