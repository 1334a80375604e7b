/**
 * Orders and notifications on real PostgreSQL, with two service instances on two ORM connections, and
 * the providers' fakes signing like the real services. `onPaid` writes a credit row inside the payment's
 * transaction, so "credited once" is counted in the database, not in memory.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../../server/config/config.ts';
import { openDatabase, type Database, type Em } from '../../../server/db/orm.ts';
import { entities } from '../../../server/modules/entities.ts';
import { AppError } from '../../../server/errors/app-error.ts';
import { BillingOrders, type BillingHooks, type OrderView } from '../../../server/modules/billing/billing.service.ts';
import type { RawNotification } from '../../../server/modules/billing/providers/provider.ts';
import { PaymentProviders } from '../../../server/modules/billing/providers/registry.ts';
import { startAlipayFake, tamperForm, type AlipayFake } from '../../fixtures/alipay-fake.ts';
import { rsaKeys } from '../../fixtures/payment-keys.ts';
import { startStripeFake, type StripeFake } from '../../fixtures/stripe-fake.ts';
import { startWechatFake, type WechatFake } from '../../fixtures/wechat-fake.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
let config: Config;
let db: Database;
let db2: Database;
let alipay: AlipayFake;
let wechat: WechatFake;
let stripe: StripeFake;
let orders: BillingOrders;
let orders2: BillingOrders;
let refunded: string[] = [];
let failNextOnPaid = false;

const log = pino({ level: 'silent' });

const hooks: BillingHooks = {
  async onPaid(order: OrderView, tx: Em) {
    if (failNextOnPaid) {
      failNextOnPaid = false;
      throw new Error('plan service unavailable');
    }
    await tx.execute('insert into "test_credit" ("order_id", "account_id", "package_id") values (?, ?, ?)', [order.id, order.accountId, order.packageId], {
      method: 'run',
    });
  },
  async onRefunded(order: OrderView) {
    refunded.push(order.id);
  },
};

beforeAll(async () => {
  database = await createTestDatabase();
  [alipay, wechat, stripe] = await Promise.all([startAlipayFake(), startWechatFake({ mode: 'certificate' }), startStripeFake()]);
  const a = alipay.config();
  const w = wechat.config();
  const s = stripe.config();
  config = parseConfig(
    {
      server: { logLevel: 'silent', baseUrl: 'https://svc.example' },
      database: { url: database.url },
      payments: { alipay: a.config, wechat: w.config, stripe: s.config, sandbox: { enabled: true } },
    },
    { ...a.env, ...w.env, ...s.env },
  );
  db = await openDatabase(config, log, entities); // migrates
  db2 = await openDatabase(config, log, entities);
  await database.query('create table "test_credit" ("id" serial primary key, "order_id" text not null, "account_id" uuid not null, "package_id" text not null)');
  // Two instances: separate ORM connections (and pools), separate provider registries, one database.
  orders = new BillingOrders(config, db, new PaymentProviders(config), hooks);
  orders2 = new BillingOrders(config, db2, new PaymentProviders(config), hooks);
});

afterAll(async () => {
  await Promise.all([db?.close(), db2?.close()]);
  await Promise.all([alipay?.close(), wechat?.close(), stripe?.close()]);
  await database?.drop();
});

async function member(): Promise<string> {
  const id = randomUUID();
  await database.query(`insert into "account" ("id", "created_at", "updated_at", "email") values ($1, now(), now(), $2)`, [id, `${id}@example.com`]);
  return id;
}

async function credits(orderId: string): Promise<number> {
  const { rows } = await database.query('select count(*)::int as n from "test_credit" where "order_id" = $1', [orderId]);
  return (rows[0] as { n: number }).n;
}

async function state(orderId: string): Promise<string> {
  return (await orders.find(orderId))!.state;
}

/** Stored bodies are the raw bytes (bytea); these notices are text, read back as such. */
async function notices(orderId: string): Promise<{ outcome: string; reason: string | null; verified: boolean; body: string | null }[]> {
  const { rows } = await database.query(`select "outcome", "reason", "verified", convert_from("body", 'UTF8') as "body" from "billing_notice" where "order_id" = $1 order by "created_at", "id"`, [orderId]);
  return rows as { outcome: string; reason: string | null; verified: boolean; body: string | null }[];
}

async function lastUnverified(): Promise<{ outcome: string; reason: string; body: string; headers: Record<string, string> }> {
  const { rows } = await database.query(
    `select "outcome", "reason", convert_from("body", 'UTF8') as "body", "headers" from "billing_notice" where "outcome" = 'unverified' order by "created_at" desc limit 1`,
  );
  return rows[0] as { outcome: string; reason: string; body: string; headers: Record<string, string> };
}

/** Resolves for everyone once `count` callers are waiting: the requests then start together. */
function barrier(count: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  return () => {
    arrived += 1;
    if (arrived === count) open();
    return gate;
  };
}

async function alipayOrder(packageId = 'pro'): Promise<OrderView> {
  return (await orders.create(await member(), packageId, 'alipay', 'CNY')).order;
}

function paidNotice(order: OrderView, fields: Record<string, string> = {}): RawNotification {
  return alipay.notice({ out_trade_no: order.id, trade_no: `2026${order.id.slice(-12)}`, total_amount: order.amount, ...fields });
}

describe('checkout', () => {
  it('prices from config in minor units, binds the order to its provider and merchant, and expires it in 2 h', async () => {
    const accountId = await member();
    const { order, payUrl } = await orders.create(accountId, 'max_x5', 'alipay', 'CNY');
    expect(order).toMatchObject({ accountId, packageId: 'max_x5', provider: 'alipay', state: 'created', amountMinor: 13_800, amount: '138.00', currency: 'CNY' });
    expect(order.id).toMatch(/^svc[A-Za-z0-9]{24}$/);
    expect(order.expiresAt.getTime() - order.createdAt.getTime()).toBe(2 * 3600_000);
    expect(payUrl).toContain(alipay.gateway);
    const { rows } = await database.query('select "app_id", "merchant_id", "provider" from "billing_order" where "id" = $1', [order.id]);
    expect(rows[0]).toEqual({ app_id: alipay.appId, merchant_id: alipay.sellerId, provider: 'alipay' });

    const native = await orders.create(accountId, 'pro', 'wechat', 'CNY');
    expect(native.qrCode).toMatch(/^weixin:/);
    expect(native.order).toMatchObject({ amountMinor: 6500, qrCode: native.qrCode });

    const card = await orders.create(accountId, 'max_x20', 'stripe', 'USD');
    expect(card.order).toMatchObject({ amountMinor: 3900, amount: '39.00', currency: 'USD', providerTradeNo: expect.stringMatching(/^cs_test_/) });
  });

  it.each([
    ['alipay', 'pro', 'USD', 'currency'],
    ['wechat', 'pro', 'USD', 'currency'],
    ['stripe', 'pro', 'EUR', 'currency'],
    ['stripe', 'free', 'USD', 'packageId'],
    ['stripe', 'platinum', 'USD', 'packageId'],
    ['stripe', 'pro', '__proto__', 'currency'],
    ['sandbox', 'pro', 'constructor', 'currency'],
  ] as const)('%s %s in %s is refused (param %s)', async (provider, packageId, currency, param) => {
    const error = await orders.create(await member(), packageId, provider, currency).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'invalid_request', options: { param } });
  });

  it('an upgrade order charges the price less the credit', async () => {
    const { order } = await orders.create(await member(), 'max_x20', 'wechat', 'CNY', { creditMinor: 4_321 });
    expect(order).toMatchObject({ listMinor: 28_300, creditMinor: 4_321, amountMinor: 23_979, amount: '239.79' });
  });
});

describe('notifications', () => {
  it('a valid notice pays exactly once, acks `success` after commit, and three replays credit nothing more', async () => {
    const order = await alipayOrder();
    const notice = paidNotice(order);
    const first = await orders.handleNotification('alipay', notice);
    expect(first.result).toMatchObject({ outcome: 'applied', order: { state: 'paid', providerTradeNo: `2026${order.id.slice(-12)}` } });
    expect(first.ack).toEqual({ status: 200, contentType: 'text/plain; charset=utf-8', body: 'success' });
    for (let replay = 0; replay < 3; replay++) {
      const again = await orders.handleNotification('alipay', notice);
      expect(again.result.outcome).toBe('duplicate');
      expect(again.ack.body).toBe('success');
    }
    expect(await credits(order.id)).toBe(1);
    expect(await state(order.id)).toBe('paid');
    const stored = await notices(order.id);
    expect(stored.map((row) => row.outcome)).toEqual(['applied', 'duplicate', 'duplicate', 'duplicate']);
    expect(stored[0]!.body).toBe(notice.body.toString('utf8'));
  });

  it('20 concurrent duplicates through a barrier credit once', async () => {
    const order = await alipayOrder('max_x20');
    const notice = paidNotice(order);
    const ready = barrier(20);
    const results = await Promise.all(
      Array.from({ length: 20 }, async () => {
        await ready();
        return orders.handleNotification('alipay', notice);
      }),
    );
    const outcomes = results.map((result) => result.result.outcome);
    expect(outcomes.filter((outcome) => outcome === 'applied')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'duplicate')).toHaveLength(19);
    expect(results.every((result) => result.ack.body === 'success')).toBe(true);
    expect(await credits(order.id)).toBe(1);
  });

  it('two service instances applying the same notice at once credit once', async () => {
    const order = (await orders.create(await member(), 'pro', 'wechat', 'CNY')).order;
    const paid = wechat.pay(order.id, order.amountMinor);
    const notice = wechat.notice(paid);
    const ready = barrier(16);
    const results = await Promise.all(
      Array.from({ length: 16 }, async (_, index) => {
        await ready();
        return (index % 2 === 0 ? orders : orders2).handleNotification('wechat', notice);
      }),
    );
    expect(results.filter((result) => result.result.outcome === 'applied')).toHaveLength(1);
    expect(results.filter((result) => result.result.outcome === 'duplicate')).toHaveLength(15);
    expect(results.every((result) => result.ack.status === 204)).toBe(true);
    expect(await credits(order.id)).toBe(1);
    expect(await state(order.id)).toBe('paid');
  });

  it('Stripe: checkout.session.completed pays; the same event delivered again is a duplicate', async () => {
    const { order } = await orders.create(await member(), 'pro', 'stripe', 'USD');
    const session = stripe.complete(order.providerTradeNo!);
    const delivery = stripe.event('checkout.session.completed', session);
    expect((await orders.handleNotification('stripe', delivery)).result.outcome).toBe('applied');
    const again = await orders2.handleNotification('stripe', delivery);
    expect(again.result.outcome).toBe('duplicate');
    expect(again.ack).toMatchObject({ status: 200, body: '{"received":true}' });
    expect(await credits(order.id)).toBe(1);
  });

  describe('credit nothing, and are stored with the reason', () => {
    async function expectNothingCredited(order: OrderView): Promise<void> {
      expect(await credits(order.id)).toBe(0);
      expect(await state(order.id)).toBe('created');
    }

    it('a tampered body', async () => {
      const order = await alipayOrder();
      const cheap = await alipayOrder();
      // A genuine notice for a 0.01 order, with its out_trade_no swapped for the 65.00 order.
      const tampered = tamperForm(alipay.notice({ out_trade_no: cheap.id, trade_no: 'T-cheap', total_amount: '0.01' }), { out_trade_no: order.id, total_amount: '65.00' });
      const handled = await orders.handleNotification('alipay', tampered);
      expect(handled.result).toMatchObject({ outcome: 'unverified', reason: 'bad_signature' });
      expect(handled.ack.body).toBe('fail');
      await expectNothingCredited(order);
      expect(await lastUnverified()).toMatchObject({ reason: 'bad_signature', body: tampered.body.toString('utf8') });
    });

    it('a foreign key', async () => {
      const order = await alipayOrder();
      const forged = alipay.notice({ out_trade_no: order.id, trade_no: 'T-foreign', total_amount: '65.00' }, { signWith: rsaKeys().privateKey });
      const handled = await orders.handleNotification('alipay', forged);
      expect(handled.result).toMatchObject({ outcome: 'unverified', reason: 'bad_signature' });
      await expectNothingCredited(order);
    });

    it('a wrong amount', async () => {
      const order = await alipayOrder();
      const handled = await orders.handleNotification('alipay', paidNotice(order, { total_amount: '0.01' }));
      expect(handled.result).toMatchObject({ outcome: 'rejected', reason: 'amount_mismatch' });
      expect(handled.ack.body).toBe('success'); // verified: a retry cannot change it; staff see it
      await expectNothingCredited(order);
      expect(await notices(order.id)).toEqual([expect.objectContaining({ outcome: 'rejected', reason: 'amount_mismatch', verified: true })]);
    });

    it('a wrong currency', async () => {
      const { order } = await orders.create(await member(), 'pro', 'stripe', 'USD');
      const session = { ...stripe.complete(order.providerTradeNo!), currency: 'eur' };
      const handled = await orders.handleNotification('stripe', stripe.event('checkout.session.completed', session));
      expect(handled.result).toMatchObject({ outcome: 'rejected', reason: 'currency_mismatch' });
      await expectNothingCredited(order);
      expect((await notices(order.id))[0]).toMatchObject({ outcome: 'rejected', reason: 'currency_mismatch' });
    });

    it.each([
      ['app_id', { app_id: '2021000000000001' }],
      ['seller_id', { seller_id: '2088000000000001' }],
    ])('a wrong Alipay %s', async (_field, fields) => {
      const order = await alipayOrder();
      const handled = await orders.handleNotification('alipay', paidNotice(order, fields));
      expect(handled.result).toMatchObject({ outcome: 'rejected', reason: 'merchant_mismatch' });
      await expectNothingCredited(order);
    });

    it('a wrong WeChat Pay mchid', async () => {
      const { order } = await orders.create(await member(), 'pro', 'wechat', 'CNY');
      const paid = { ...wechat.pay(order.id, order.amountMinor), mchid: '1900000001' };
      const handled = await orders.handleNotification('wechat', wechat.notice(paid));
      expect(handled.result).toMatchObject({ outcome: 'rejected', reason: 'merchant_mismatch' });
      await expectNothingCredited(order);
    });

    it('a non-final trade status', async () => {
      const order = await alipayOrder();
      const handled = await orders.handleNotification('alipay', paidNotice(order, { trade_status: 'WAIT_BUYER_PAY' }));
      expect(handled.result.outcome).toBe('pending');
      expect(handled.ack.body).toBe('success');
      await expectNothingCredited(order);
      expect((await notices(order.id))[0]).toMatchObject({ outcome: 'pending', verified: true });
    });

    it('a stale WeChat Pay timestamp', async () => {
      const { order } = await orders.create(await member(), 'pro', 'wechat', 'CNY');
      const stale = wechat.notice(wechat.pay(order.id, order.amountMinor), { timestamp: Math.floor(Date.now() / 1000) - 600 });
      const handled = await orders.handleNotification('wechat', stale);
      expect(handled.result).toMatchObject({ outcome: 'unverified', reason: 'stale_timestamp' });
      expect(handled.ack.status).toBe(401);
      await expectNothingCredited(order);
      expect((await lastUnverified()).headers).toMatchObject({ 'wechatpay-serial': wechat.serial });
    });

    it('a bad Stripe signature', async () => {
      const { order } = await orders.create(await member(), 'pro', 'stripe', 'USD');
      const session = stripe.complete(order.providerTradeNo!);
      const handled = await orders.handleNotification('stripe', stripe.event('checkout.session.completed', session, { secret: 'whsec_forged' }));
      expect(handled.result).toMatchObject({ outcome: 'unverified', reason: 'bad_signature' });
      expect(handled.ack.status).toBe(400);
      await expectNothingCredited(order);
    });

    it('a notice from another provider for the same order number', async () => {
      const order = await alipayOrder();
      // Genuinely signed by WeChat Pay, for the Alipay order's number and amount.
      const forged = wechat.notice({
        appid: wechat.appId,
        mchid: wechat.mchId,
        out_trade_no: order.id,
        transaction_id: '4200000000000000001',
        trade_state: 'SUCCESS',
        amount: { total: order.amountMinor, currency: 'CNY' },
      });
      const handled = await orders.handleNotification('wechat', forged);
      expect(handled.result).toMatchObject({ outcome: 'rejected', reason: 'provider_mismatch' });
      await expectNothingCredited(order);
      expect((await notices(order.id))[0]).toMatchObject({ outcome: 'rejected', reason: 'provider_mismatch', verified: true });
      // The order's own provider still pays it.
      expect((await orders.handleNotification('alipay', paidNotice(order))).result.outcome).toBe('applied');
      expect(await credits(order.id)).toBe(1);
    });

    it('a provider trade that already paid another order', async () => {
      const first = await alipayOrder();
      const second = await alipayOrder();
      await orders.handleNotification('alipay', alipay.notice({ out_trade_no: first.id, trade_no: 'T-shared', total_amount: '65.00' }));
      const handled = await orders.handleNotification('alipay', alipay.notice({ out_trade_no: second.id, trade_no: 'T-shared', total_amount: '65.00' }));
      expect(handled.result).toMatchObject({ outcome: 'rejected', reason: 'trade_already_used' });
      await expectNothingCredited(second);
    });

    it('an unknown order', async () => {
      const handled = await orders.handleNotification('alipay', alipay.notice({ out_trade_no: 'svcNOSUCHORDER', trade_no: 'T-x', total_amount: '65.00' }));
      expect(handled.result).toMatchObject({ outcome: 'rejected', reason: 'unknown_order' });
      expect(await notices('svcNOSUCHORDER')).toHaveLength(1);
    });
  });

  it('when onPaid fails nothing is credited, the provider is asked to retry, and the retry pays', async () => {
    const order = await alipayOrder();
    const notice = paidNotice(order);
    failNextOnPaid = true;
    const failed = await orders.handleNotification('alipay', notice);
    expect(failed.result.outcome).toBe('error');
    expect(failed.ack.body).toBe('fail');
    expect(await state(order.id)).toBe('created');
    expect(await credits(order.id)).toBe(0);
    expect((await orders.handleNotification('alipay', notice)).result.outcome).toBe('applied');
    expect(await credits(order.id)).toBe(1);
  });

  it('the sandbox pays with its own signed notice, and cannot be forged', async () => {
    const { order, payUrl } = await orders.create(await member(), 'pro', 'sandbox', 'USD');
    expect(payUrl).toBe(`https://svc.example/payments/sandbox/${order.id}`);
    const providers = new PaymentProviders(config);
    const forged = providers.sandbox!.signNotice(order, 'paid'); // another instance's secret
    expect((await orders.handleNotification('sandbox', forged)).result).toMatchObject({ outcome: 'unverified', reason: 'bad_signature' });
    // The instance's own registry is not reachable from here; a second instance's sandbox is a stranger too.
    expect((await orders2.handleNotification('sandbox', forged)).result.outcome).toBe('unverified');
    expect(await credits(order.id)).toBe(0);
  });
});

describe('reconciliation and expiry', () => {
  it('a lost notice is recovered by asking the provider (Alipay, WeChat Pay, Stripe)', async () => {
    const a = await alipayOrder();
    alipay.pay(a.id, a.amount);
    const w = (await orders.create(await member(), 'pro', 'wechat', 'CNY')).order;
    wechat.pay(w.id, w.amountMinor);
    const s = (await orders.create(await member(), 'pro', 'stripe', 'USD')).order;
    stripe.complete(s.providerTradeNo!);
    const report = await orders.reconcile({ now: new Date(Date.now() + 10 * 60_000) });
    for (const order of [a, w, s]) {
      expect(report.results).toContainEqual({ orderId: order.id, result: 'paid' });
      expect(await credits(order.id)).toBe(1);
      expect((await notices(order.id))[0]).toMatchObject({ outcome: 'applied', verified: true });
    }
    // The late notification afterwards is a duplicate.
    expect((await orders.handleNotification('alipay', paidNotice(a, { trade_no: alipay.trades.get(a.id)!.tradeNo }))).result.outcome).toBe('duplicate');
    expect(await credits(a.id)).toBe(1);
  });

  it('an order whose onPaid fails does not stop reconciliation of the others, and is paid on the next run', async () => {
    const first = await alipayOrder();
    alipay.pay(first.id, first.amount);
    const second = await alipayOrder();
    alipay.pay(second.id, second.amount);
    failNextOnPaid = true;
    const report = await orders.reconcile({ now: new Date(Date.now() + 10 * 60_000) });
    const mine = report.results.filter((result) => result.orderId === first.id || result.orderId === second.id);
    expect(mine.map((result) => result.result).sort()).toEqual(['error', 'paid']);
    await orders.reconcile({ now: new Date(Date.now() + 10 * 60_000) });
    expect(await credits(first.id)).toBe(1);
    expect(await credits(second.id)).toBe(1);
  });

  it('an unpaid order stays open for 2 hours, then is closed at the provider and expires; a late payment credits nothing', async () => {
    const start = Date.now();
    const a = await alipayOrder();
    const w = (await orders.create(await member(), 'pro', 'wechat', 'CNY')).order;
    const s = (await orders.create(await member(), 'pro', 'stripe', 'USD')).order;
    const before = await orders.reconcile({ now: new Date(start + 119 * 60_000) });
    for (const order of [a, w, s]) expect(before.results).toContainEqual({ orderId: order.id, result: 'pending' });
    const after = await orders.reconcile({ now: new Date(start + 121 * 60_000) });
    for (const order of [a, w, s]) {
      expect(after.results).toContainEqual({ orderId: order.id, result: 'expired' });
      expect(await state(order.id)).toBe('expired');
    }
    expect(wechat.orders.get(w.id)!.trade_state).toBe('CLOSED');
    expect(stripe.sessions.get(s.providerTradeNo!)!.status).toBe('expired');
    const late = await orders.handleNotification('alipay', paidNotice(a));
    expect(late.result).toMatchObject({ outcome: 'rejected', reason: 'order_not_payable' });
    expect(await credits(a.id)).toBe(0);
    expect((await orders.reconcileOrder(a.id)).result).toBe('unchanged');
  });

  it('an order paid at the last minute is not expired: the provider is asked first', async () => {
    const start = Date.now();
    const w = (await orders.create(await member(), 'pro', 'wechat', 'CNY')).order;
    wechat.pay(w.id, w.amountMinor);
    expect(await orders.reconcileOrder(w.id, new Date(start + 3 * 3600_000))).toEqual({ orderId: w.id, result: 'paid' });
    expect(await credits(w.id)).toBe(1);
  });

  it('the sandbox expires its unpaid orders after 2 hours too', async () => {
    const { order } = await orders.create(await member(), 'pro', 'sandbox', 'CNY');
    expect((await orders.reconcileOrder(order.id, new Date(order.createdAt.getTime() + 119 * 60_000))).result).toBe('pending');
    expect((await orders.reconcileOrder(order.id, new Date(order.createdAt.getTime() + 120 * 60_000))).result).toBe('expired');
  });
});

describe('refunds', () => {
  it('a paid order is refunded once through its provider; anything else is refused', async () => {
    const order = await alipayOrder();
    expect(await orders.refund(order.id, { reason: 'asked' }).catch((error: AppError) => error.code)).toBe('order_not_refundable');
    alipay.pay(order.id, order.amount);
    await orders.handleNotification('alipay', paidNotice(order, { trade_no: alipay.trades.get(order.id)!.tradeNo }));
    refunded = [];
    const done = await orders.refund(order.id, { reason: 'asked for it' });
    expect(done).toMatchObject({ state: 'refunded', refundedAt: expect.any(Date) });
    expect(refunded).toEqual([order.id]);
    expect(alipay.trades.get(order.id)!.refunds.get(`${order.id}R1`)).toBe('65.00');
    expect(await orders.refund(order.id, { reason: 'again' }).catch((error: AppError) => error.code)).toBe('order_not_refundable');
    // A replayed payment notice after the refund credits nothing.
    expect((await orders.handleNotification('alipay', paidNotice(order, { trade_no: alipay.trades.get(order.id)!.tradeNo }))).result.outcome).toBe('duplicate');
    expect(await credits(order.id)).toBe(1);
  });
});
