/**
 * How payment notices are kept (issue 46): verified notices are money records and keep every byte; notices
 * that fail verification keep a digest, the headers and the first KiB, are stored at a bounded rate per
 * provider across instances, and are purged after `payments.unverifiedRetentionDays`. Any byte — a NUL,
 * invalid UTF-8 — gets the provider's own failure reply and is kept, never a 5xx and a lost notice. Through
 * the real app on two instances over real PostgreSQL and Redis, the providers' fakes signing as they do.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawNotification } from '../../../server/modules/billing/providers/provider.ts';
import { startAlipayFake, type AlipayFake } from '../../fixtures/alipay-fake.ts';
import { startStripeFake, type StripeFake } from '../../fixtures/stripe-fake.ts';
import { startWechatFake, type WechatFake } from '../../fixtures/wechat-fake.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;
let b: TestApp;
let alipay: AlipayFake;
let wechat: WechatFake;
let stripe: StripeFake;
let providerConfig: { config: Record<string, unknown>; env: Record<string, string> };

interface NoticeRow {
  provider: string;
  verified: boolean;
  outcome: string;
  reason: string | null;
  headers: Record<string, string> | null;
  body: Buffer | null;
  body_sha256: string | null;
  body_bytes: number | null;
  order_id: string | null;
  payload: unknown;
}

beforeAll(async () => {
  setup = await realMode();
  [alipay, wechat, stripe] = await Promise.all([startAlipayFake(), startWechatFake(), startStripeFake()]);
  const [al, we, st] = [alipay.config(), wechat.config(), stripe.config()];
  providerConfig = {
    config: { payments: { alipay: al.config, wechat: we.config, stripe: st.config }, rateLimits: { ipPerMinute: 100_000 } },
    env: { ...al.env, ...we.env, ...st.env },
  };
  const options = { ...providerConfig, config: { ...providerConfig.config, payments: { ...(providerConfig.config.payments as object), unverifiedPerMinute: 10_000 } } };
  a = await startApp(setup.config, options);
  b = await startApp(setup.config, options);
});

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await Promise.allSettled([alipay?.close(), wechat?.close(), stripe?.close()]);
  await setup?.cleanup();
});

async function notify(app: TestApp, provider: string, notice: RawNotification): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(notice.headers)) if (typeof value === 'string') headers[name] = value;
  const response = await fetch(`${app.url}/api/membership/payments/${provider}/notify`, { method: 'POST', headers, body: new Uint8Array(notice.body) });
  return { status: response.status, body: await response.text() };
}

/** The rows whose body digest is this body's: the notice as stored. */
async function storedAs(body: Buffer): Promise<NoticeRow[]> {
  const { rows } = await setup.database.query(
    'select "provider", "verified", "outcome", "reason", "headers", "body", "body_sha256", "body_bytes", "order_id", "payload" from "billing_notice" where "body_sha256" = $1',
    [sha256(body)],
  );
  return rows as NoticeRow[];
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A notice as WeChat Pay would send it, with `body` in place of its own (the signature then fails). */
function forgedWechat(body: Buffer): RawNotification {
  const genuine = wechat.notice(wechat.pay(`svc${Math.random().toString(36).slice(2, 14)}`, 6500));
  return { headers: genuine.headers, body };
}

/** One round of the payment jobs at `now` on `app`, once it holds the lease (a timer round may hold it). */
async function purgeRound(app: TestApp, now: Date): Promise<number> {
  for (;;) {
    const run = await app.app.services.billingJobs.runOnce(now);
    if (run.purgedNotices !== null) return run.purgedNotices;
  }
}

describe('bad bytes in a notice', () => {
  it.each([
    ['alipay', { 'content-type': 'application/x-www-form-urlencoded' }, 200, 'fail'],
    ['wechat', { 'content-type': 'application/json', 'wechatpay-timestamp': String(Math.floor(Date.now() / 1000)), 'wechatpay-nonce': 'n', 'wechatpay-signature': 'c2ln', 'wechatpay-serial': 'S1' }, 401, '{"code":"FAIL","message":"signature verification failed"}'],
    ['stripe', { 'content-type': 'application/json', 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=00` }, 400, '{"error":"signature verification failed"}'],
  ] as const)('a %s notice with a NUL byte or invalid UTF-8 gets the provider failure reply and is kept for audit, byte for byte', async (provider, headers, status, reply) => {
    const bodies = [`{"id":"${provider}","x":"a\u0000b"}`, `out_trade_no=${provider}&sign=\u0000`].map((text) => Buffer.from(text));
    bodies.push(Buffer.concat([Buffer.from(`{"${provider}":`), Buffer.from([0x00, 0xff, 0xfe, 0x22, 0x7d])]));
    for (const body of bodies) {
      const answer = await notify(a, provider, { headers, body });
      expect(answer).toEqual({ status, body: reply });
      const [row, ...more] = await storedAs(body);
      expect(more).toEqual([]);
      expect(row).toMatchObject({ provider, verified: false, outcome: 'unverified', body_bytes: body.length });
      expect(Buffer.compare(row!.body!, body)).toBe(0);
    }
  });

  it('a verified notice whose JSON carries \\u0000 is applied, and kept as received', async () => {
    const member = await seed(a).member({ tag: 'nul' });
    const response = await member.web.at(a.url).fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'stripe', currency: 'USD' } });
    const { order } = (await response.json()) as { order: { id: string; providerTradeNo: string } };
    const session = { ...stripe.complete(order.providerTradeNo), customer_details: { name: 'Null\u0000Byte', email: member.email } };
    const delivery = stripe.event('checkout.session.completed', session);
    expect(delivery.body.toString()).toContain('\\u0000');
    expect(await notify(b, 'stripe', delivery)).toEqual({ status: 200, body: '{"received":true}' });
    const [row] = await storedAs(delivery.body);
    expect(row).toMatchObject({ verified: true, outcome: 'applied', order_id: order.id, body_bytes: delivery.body.length });
    expect(Buffer.compare(row!.body!, delivery.body)).toBe(0);
    expect(JSON.stringify(row!.payload)).toContain('Null\uFFFDByte');
  });
});

describe('what is kept of a notice', () => {
  it('an unverified notice keeps its digest, its signature headers and the first KiB; a verified one keeps every byte', async () => {
    const forged = Buffer.from(JSON.stringify({ id: 'EV-forged', padding: 'x'.repeat(20_000) }));
    expect((await notify(a, 'wechat', forgedWechat(forged))).status).toBe(401);
    const [kept] = await storedAs(forged);
    expect(kept).toMatchObject({ verified: false, outcome: 'unverified', reason: 'bad_signature', body_bytes: forged.length, body_sha256: sha256(forged) });
    expect(Buffer.compare(kept!.body!, forged.subarray(0, 1024))).toBe(0);
    expect(Object.keys(kept!.headers!).sort()).toEqual(['content-length', 'content-type', 'user-agent', 'wechatpay-nonce', 'wechatpay-serial', 'wechatpay-signature', 'wechatpay-timestamp']);

    const member = await seed(a).member({ tag: 'full' });
    const response = await member.web.at(a.url).fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'wechat', currency: 'CNY' } });
    const { order } = (await response.json()) as { order: { id: string; amountMinor: number } };
    const genuine = wechat.notice({ ...wechat.pay(order.id, order.amountMinor), trade_state_desc: 'y'.repeat(3000) });
    expect(genuine.body.length).toBeGreaterThan(4000);
    expect((await notify(b, 'wechat', genuine)).status).toBe(204);
    const [money] = await storedAs(genuine.body);
    expect(money).toMatchObject({ verified: true, outcome: 'applied', body_bytes: genuine.body.length });
    expect(Buffer.compare(money!.body!, genuine.body)).toBe(0);
  });

  it('a flood of large forged notices stores a KiB each, not the bodies', async () => {
    const bodies = Array.from({ length: 40 }, (_, index) => Buffer.from(JSON.stringify({ id: `flood-${index}`, padding: 'z'.repeat(200_000) })));
    const answers = await Promise.all(bodies.map((body, index) => notify(index % 2 ? a : b, 'wechat', forgedWechat(body))));
    expect(answers.every((answer) => answer.status === 401)).toBe(true);
    const { rows } = await setup.database.query('select count(*)::int as n, sum(octet_length("body"))::int as bytes from "billing_notice" where "body_sha256" = any($1)', [bodies.map(sha256)]);
    expect(rows[0]).toEqual({ n: 40, bytes: 40 * 1024 });
  });
});

describe('unverified notices are rate-limited per provider', () => {
  it('at most payments.unverifiedPerMinute are stored per provider across instances; the rest are answered alike, and genuine notices still pay', async () => {
    // Instances of their own with a limit of 5 (and rate-limit keys of their own).
    const options = { ...providerConfig, config: { ...providerConfig.config, payments: { ...(providerConfig.config.payments as object), unverifiedPerMinute: 5 } } };
    const base = { ...setup.config, redis: { ...(setup.config.redis as object), keyPrefix: `${(setup.config.redis as { keyPrefix: string }).keyPrefix}limited:` } };
    const [c, d] = await Promise.all([startApp(base, options), startApp(base, options)]);
    try {
      const forged = Array.from({ length: 12 }, (_, index) => Buffer.from(`{"id":"limited-${index}"}`));
      const answers = await Promise.all(forged.map((body, index) => notify(index % 2 ? c : d, 'wechat', forgedWechat(body))));
      expect(answers.map((answer) => answer.status)).toEqual(new Array(12).fill(401));
      const { rows } = await setup.database.query('select count(*)::int as n from "billing_notice" where "body_sha256" = any($1)', [forged.map(sha256)]);
      expect(rows[0]).toEqual({ n: 5 });

      // Another provider has its own budget.
      const alipayForged = Buffer.from('out_trade_no=svclimited&total_amount=65.00&sign=AAAA&sign_type=RSA2');
      expect(await notify(c, 'alipay', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: alipayForged })).toEqual({ status: 200, body: 'fail' });
      expect(await storedAs(alipayForged)).toHaveLength(1);

      // Verified notices are never limited.
      const member = await seed(c).member({ tag: 'limited' });
      const response = await member.web.at(c.url).fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'wechat', currency: 'CNY' } });
      const { order } = (await response.json()) as { order: { id: string; amountMinor: number } };
      const genuine = wechat.notice(wechat.pay(order.id, order.amountMinor));
      expect((await notify(d, 'wechat', genuine)).status).toBe(204);
      expect(await storedAs(genuine.body)).toMatchObject([{ verified: true, outcome: 'applied' }]);
    } finally {
      await Promise.allSettled([c.close(), d.close()]);
    }
  });
});

describe('retention', () => {
  it('unverified notices are purged after payments.unverifiedRetentionDays (7); verified ones stay', async () => {
    const forged = Buffer.from('{"id":"to-be-purged"}');
    expect((await notify(a, 'wechat', forgedWechat(forged))).status).toBe(401);
    const member = await seed(a).member({ tag: 'kept' });
    const response = await member.web.at(a.url).fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'wechat', currency: 'CNY' } });
    const { order } = (await response.json()) as { order: { id: string; amountMinor: number } };
    const genuine = wechat.notice(wechat.pay(order.id, order.amountMinor));
    expect((await notify(a, 'wechat', genuine)).status).toBe(204);

    const day = 86_400_000;
    await purgeRound(a, new Date(Date.now() + 6 * day));
    expect(await storedAs(forged)).toHaveLength(1);
    expect(await purgeRound(b, new Date(Date.now() + 7 * day + 60_000))).toBeGreaterThanOrEqual(1);
    expect(await storedAs(forged)).toEqual([]);
    expect(await storedAs(genuine.body)).toMatchObject([{ verified: true, outcome: 'applied' }]);
    const { rows } = await setup.database.query('select count(*)::int as n from "billing_notice" where not "verified"');
    expect(rows[0]).toEqual({ n: 0 });
  });
});
