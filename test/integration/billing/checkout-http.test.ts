/**
 * Checkout and the plan lifecycle through the real app over HTTP, on two instances sharing PostgreSQL and
 * Redis, with the providers' local fakes signing like the real services (SECURITY "Payments", each line
 * a test here or in orders.test.ts at the library level): members check out over REST and GraphQL, the
 * providers call back on `/api/membership/payments/<provider>/notify` with their raw signed bodies, and
 * what was credited is read from the database (the `order:paid` audit row, the term) and from the usage
 * endpoint (the pools follow at once).
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { RawNotification } from '../../../server/modules/billing/providers/provider.ts';
import { addMonths } from '../../../server/infra/calendar.ts';
import { startAlipayFake, tamperForm, type AlipayFake } from '../../fixtures/alipay-fake.ts';
import { rsaKeys } from '../../fixtures/payment-keys.ts';
import { startStripeFake, type StripeFake } from '../../fixtures/stripe-fake.ts';
import { startWechatFake, type WechatFake } from '../../fixtures/wechat-fake.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;
let b: TestApp;
let alipay: AlipayFake;
let wechat: WechatFake;
let stripe: StripeFake;

interface OrderJson {
  id: string;
  state: string;
  amount: string;
  amountMinor: number;
  listMinor: number;
  creditMinor: number;
  currency: string;
  provider: string;
  packageId: string;
  providerTradeNo: string | null;
  paidAt: string | null;
}

interface SubscriptionJson {
  packageId: string;
  state: string;
  currentPeriodStart: string;
  currentPeriodEnd: string;
  cancelAtPeriodEnd: boolean;
  nextPackageId: string | null;
}

beforeAll(async () => {
  setup = await realMode();
  [alipay, wechat, stripe] = await Promise.all([startAlipayFake(), startWechatFake(), startStripeFake()]);
  const [al, we, st] = [alipay.config(), wechat.config(), stripe.config()];
  const options = {
    config: { payments: { alipay: al.config, wechat: we.config, stripe: st.config, sandbox: { enabled: true } }, rateLimits: { ipPerMinute: 100_000 } },
    env: { ...al.env, ...we.env, ...st.env },
  };
  a = await startApp(setup.config, options);
  b = await startApp(setup.config, options);
});

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await Promise.allSettled([alipay?.close(), wechat?.close(), stripe?.close()]);
  await setup?.cleanup();
});

async function checkout(member: Person, body: Record<string, unknown>, app: TestApp = a): Promise<{ order: OrderJson; payUrl?: string; qrCode?: string }> {
  const response = await member.web.at(app.url).fetch('/api/membership/checkout', { body });
  const json = (await response.json()) as { ok: boolean; order: OrderJson; payUrl?: string; qrCode?: string };
  expect(response.status, JSON.stringify(json)).toBe(201);
  return json;
}

async function notify(app: TestApp, provider: string, notice: RawNotification): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(notice.headers)) if (typeof value === 'string') headers[name] = value;
  const response = await fetch(`${app.url}/api/membership/payments/${provider}/notify`, { method: 'POST', headers, body: new Uint8Array(notice.body) });
  return { status: response.status, body: await response.text() };
}

async function orderOf(member: Person, id: string): Promise<OrderJson> {
  const response = await member.web.fetch(`/api/membership/orders/${id}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { order: OrderJson }).order;
}

async function subscriptionOf(member: Person): Promise<SubscriptionJson | null> {
  return ((await (await member.web.fetch('/api/membership/subscription')).json()) as { subscription: SubscriptionJson | null }).subscription;
}

async function usage(app: TestApp, key: string): Promise<{ packageId: string; fastDay: number }> {
  const response = await fetch(`${app.url}/api/membership/usage`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await response.json()) as { packageId: string; pools: { class: string; window: string; limit: { amountMicros: number } }[] };
  return { packageId: body.packageId, fastDay: body.pools.find((pool) => pool.class === 'fast' && pool.window === 'day')!.limit.amountMicros };
}

/** How many times the order was credited: `order:paid` audit rows (written in the payment's transaction). */
async function credits(orderId: string): Promise<number> {
  const { rows } = await setup.database.query(`select count(*)::int as n from audit_log where action = 'order:paid' and target_id = $1`, [orderId]);
  return (rows[0] as { n: number }).n;
}

async function accountPackage(accountId: string): Promise<string> {
  const { rows } = await setup.database.query('select plan_package from account where id = $1', [accountId]);
  return (rows[0] as { plan_package: string }).plan_package;
}

function alipayPaid(order: OrderJson, fields: Record<string, string> = {}): RawNotification {
  return alipay.notice({ out_trade_no: order.id, trade_no: `2026${order.id.slice(-16)}`, total_amount: order.amount, ...fields });
}

/** One round of the payment jobs at `now` on `app`, once it holds the reconciliation lease (a timer round elsewhere may hold it). */
async function jobRound(app: TestApp, now: Date) {
  for (;;) {
    const run = await app.app.services.billingJobs.runOnce(now);
    if (run.reconcile) return run.reconcile;
  }
}

const oneMonthAfter = (iso: string) => addMonths(new Date(iso), 1, 'UTC').toISOString();

describe('checkout over REST', () => {
  it('prices from config, binds the order to the provider, and answers each provider’s way', async () => {
    const member = await seed(a).member({ tag: 'buyer' });
    const card = await checkout(member, { packageId: 'max_x20', provider: 'stripe', currency: 'USD' });
    expect(card.order).toMatchObject({ state: 'created', amount: '39.00', amountMinor: 3900, currency: 'USD', provider: 'stripe', packageId: 'max_x20' });
    expect(card.payUrl).toBeTruthy();
    const native = await checkout(member, { packageId: 'pro', provider: 'wechat', currency: 'CNY' });
    expect(native.qrCode).toMatch(/^weixin:/);
    expect(native.payUrl).toBeUndefined();
    const redirect = await checkout(member, { packageId: 'max_x5', provider: 'alipay', currency: 'CNY', device: 'mobile' });
    expect(new URL(redirect.payUrl!).searchParams.get('method')).toBe('alipay.trade.wap.pay');

    const orders = (await (await member.web.fetch('/api/membership/orders')).json()) as { orders: OrderJson[] };
    expect(orders.orders.map((order) => order.id)).toEqual([redirect.order.id, native.order.id, card.order.id]);
    // Someone else's order is not found, and the order is unchanged.
    const other = await seed(a).member({ tag: 'nosy' });
    const peek = await other.web.fetch(`/api/membership/orders/${card.order.id}`);
    expect(peek.status).toBe(404);
    expect(await peek.json()).toMatchObject({ ok: false, code: 'not_found' });
  });

  it.each([
    [{ packageId: 'pro', provider: 'alipay', currency: 'USD' }, 'currency'],
    [{ packageId: 'free', provider: 'stripe', currency: 'USD' }, 'packageId'],
    [{ packageId: 'platinum', provider: 'stripe', currency: 'USD' }, 'packageId'],
    [{ packageId: 'pro', provider: 'paypal', currency: 'USD' }, 'provider'],
    [{ packageId: 'pro', provider: 'stripe', currency: 'usd' }, 'currency'],
    [{ packageId: 'pro', provider: 'stripe' }, 'currency'],
    [{ packageId: 'pro', provider: 'alipay', currency: 'CNY', device: 'tablet' }, 'device'],
  ])('refuses %j with a 400 naming %s', async (body, param) => {
    const member = await seed(a).member({ tag: 'bad-checkout' });
    const response = await member.web.fetch('/api/membership/checkout', { body });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ ok: false, code: 'invalid_request', error: { param } });
  });

  it('needs a web session: no session 401, an API key 401', async () => {
    const anonymous = await fetch(`${a.url}/api/membership/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"packageId":"pro","provider":"sandbox","currency":"USD"}' });
    expect(anonymous.status).toBe(401);
    const member = await seed(a).member({ tag: 'key-buyer' });
    const byKey = await fetch(`${a.url}/api/membership/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await member.key()}` },
      body: '{"packageId":"pro","provider":"sandbox","currency":"USD"}',
    });
    expect(byKey.status).toBe(401);
    expect(await byKey.json()).toMatchObject({ code: 'sign_in_required' });
  });
});

describe('notifications over HTTP', () => {
  it('a valid Alipay notice upgrades exactly once, acks `success`, and the pools switch to Pro at once on the other instance', async () => {
    const member = await seed(a).member({ tag: 'alipay' });
    const key = await member.key();
    expect(await usage(b, key)).toEqual({ packageId: 'free', fastDay: 200_000 });
    const { order } = await checkout(member, { packageId: 'pro', provider: 'alipay', currency: 'CNY' });
    const notice = alipayPaid(order);
    expect(await notify(a, 'alipay', notice)).toEqual({ status: 200, body: 'success' });
    const paid = await orderOf(member, order.id);
    expect(paid.state).toBe('paid');
    expect(await usage(b, key)).toMatchObject({ packageId: 'pro' });
    expect((await usage(b, key)).fastDay).toBeGreaterThan(200_000);
    // Three replays, to either instance: acknowledged, nothing more credited.
    for (const app of [a, b, a]) expect(await notify(app, 'alipay', notice)).toEqual({ status: 200, body: 'success' });
    expect(await credits(order.id)).toBe(1);
    const subscription = await subscriptionOf(member);
    expect(subscription).toMatchObject({ packageId: 'pro', state: 'active', currentPeriodStart: paid.paidAt, currentPeriodEnd: oneMonthAfter(paid.paidAt!), cancelAtPeriodEnd: false });
    // The receipt, in the account's language (English by default), from the instance that took the notice.
    await expect.poll(() => a.app.services.mailer.lastTo(member.email)?.subject).toContain('svc receipt');
    const mail = a.app.services.mailer.lastTo(member.email)!;
    expect(mail.text).toContain(order.id);
    expect(mail.text).toContain('CNY 65.00');
  });

  it('the receipt is in Chinese for an account that chose Chinese', async () => {
    const member = await seed(a).member({ tag: 'zh' });
    await setup.database.query(`update account set locale = 'zh-CN' where id = $1`, [member.id]);
    const { order } = await checkout(member, { packageId: 'pro', provider: 'alipay', currency: 'CNY' });
    expect((await notify(a, 'alipay', alipayPaid(order))).body).toBe('success');
    await expect.poll(() => a.app.services.mailer.lastTo(member.email)?.subject).toContain('付款收据');
  });

  it('concurrent duplicates of a WeChat Pay notice, half to each instance, credit once', async () => {
    const member = await seed(a).member({ tag: 'wechat' });
    const { order } = await checkout(member, { packageId: 'max_x5', provider: 'wechat', currency: 'CNY' });
    const notice = wechat.notice(wechat.pay(order.id, order.amountMinor));
    const answers = await Promise.all(Array.from({ length: 12 }, (_, index) => notify(index % 2 === 0 ? a : b, 'wechat', notice)));
    expect(answers.every((answer) => answer.status === 204)).toBe(true);
    expect(await credits(order.id)).toBe(1);
    expect(await accountPackage(member.id)).toBe('max_x5');
    const subscription = await subscriptionOf(member);
    const paid = await orderOf(member, order.id);
    expect(subscription?.currentPeriodEnd).toBe(oneMonthAfter(paid.paidAt!));
  });

  it('a Stripe-signed webhook pays the card order; the same event again is a duplicate', async () => {
    const member = await seed(a).member({ tag: 'stripe' });
    const { order } = await checkout(member, { packageId: 'pro', provider: 'stripe', currency: 'USD' });
    const delivery = stripe.event('checkout.session.completed', stripe.complete(order.providerTradeNo!));
    expect(await notify(b, 'stripe', delivery)).toEqual({ status: 200, body: '{"received":true}' });
    expect(await notify(a, 'stripe', delivery)).toEqual({ status: 200, body: '{"received":true}' });
    expect(await credits(order.id)).toBe(1);
    expect(await accountPackage(member.id)).toBe('pro');
  });

  describe('credit nothing', () => {
    async function nothingCredited(member: Person, order: OrderJson): Promise<void> {
      expect(await credits(order.id)).toBe(0);
      expect((await orderOf(member, order.id)).state).toBe('created');
      expect(await accountPackage(member.id)).toBe('free');
      expect(await subscriptionOf(member)).toBeNull();
    }

    async function alipayOrder(): Promise<{ member: Person; order: OrderJson }> {
      const member = await seed(a).member({ tag: 'forged' });
      return { member, order: (await checkout(member, { packageId: 'pro', provider: 'alipay', currency: 'CNY' })).order };
    }

    it('a tampered body (Alipay asks to retry: `fail`)', async () => {
      const { member, order } = await alipayOrder();
      const cheap = alipay.notice({ out_trade_no: 'svcSomeOtherOrder', trade_no: 'T-cheap', total_amount: '0.01' });
      expect(await notify(a, 'alipay', tamperForm(cheap, { out_trade_no: order.id, total_amount: order.amount }))).toEqual({ status: 200, body: 'fail' });
      await nothingCredited(member, order);
    });

    it('a foreign key', async () => {
      const { member, order } = await alipayOrder();
      expect((await notify(a, 'alipay', alipay.notice({ out_trade_no: order.id, trade_no: 'T-foreign', total_amount: order.amount }, { signWith: rsaKeys().privateKey }))).body).toBe('fail');
      await nothingCredited(member, order);
    });

    it('a wrong amount', async () => {
      const { member, order } = await alipayOrder();
      expect((await notify(a, 'alipay', alipayPaid(order, { total_amount: '0.01' }))).body).toBe('success');
      await nothingCredited(member, order);
    });

    it('a wrong currency', async () => {
      const member = await seed(a).member({ tag: 'forged' });
      const { order } = await checkout(member, { packageId: 'pro', provider: 'stripe', currency: 'USD' });
      const session = { ...stripe.complete(order.providerTradeNo!), currency: 'eur' };
      expect((await notify(a, 'stripe', stripe.event('checkout.session.completed', session))).status).toBe(200);
      await nothingCredited(member, order);
    });

    it.each([['app_id', '2021000000000001'], ['seller_id', '2088000000000001']])('a wrong Alipay %s', async (field, value) => {
      const { member, order } = await alipayOrder();
      expect((await notify(a, 'alipay', alipayPaid(order, { [field]: value }))).body).toBe('success');
      await nothingCredited(member, order);
    });

    it('a wrong WeChat Pay merchant id', async () => {
      const member = await seed(a).member({ tag: 'forged' });
      const { order } = await checkout(member, { packageId: 'pro', provider: 'wechat', currency: 'CNY' });
      expect((await notify(a, 'wechat', wechat.notice({ ...wechat.pay(order.id, order.amountMinor), mchid: '1900000001' }))).status).toBe(204);
      await nothingCredited(member, order);
    });

    it('a non-final trade status', async () => {
      const { member, order } = await alipayOrder();
      expect((await notify(a, 'alipay', alipayPaid(order, { trade_status: 'WAIT_BUYER_PAY' }))).body).toBe('success');
      await nothingCredited(member, order);
    });

    it('a bad Stripe signature (400) and a stale WeChat Pay timestamp (401)', async () => {
      const member = await seed(a).member({ tag: 'forged' });
      const { order } = await checkout(member, { packageId: 'pro', provider: 'stripe', currency: 'USD' });
      expect((await notify(a, 'stripe', stripe.event('checkout.session.completed', stripe.complete(order.providerTradeNo!), { secret: 'whsec_forged' }))).status).toBe(400);
      await nothingCredited(member, order);
      const other = await seed(a).member({ tag: 'forged' });
      const native = (await checkout(other, { packageId: 'pro', provider: 'wechat', currency: 'CNY' })).order;
      const stale = wechat.notice(wechat.pay(native.id, native.amountMinor), { timestamp: Math.floor(Date.now() / 1000) - 600 });
      expect((await notify(a, 'wechat', stale)).status).toBe(401);
      await nothingCredited(other, native);
    });

    it('a notice from another provider for the same order number', async () => {
      const { member, order } = await alipayOrder();
      const forged = wechat.notice({
        appid: wechat.appId,
        mchid: wechat.mchId,
        out_trade_no: order.id,
        transaction_id: '4200000000000000099',
        trade_state: 'SUCCESS',
        amount: { total: order.amountMinor, currency: 'CNY' },
      });
      expect((await notify(a, 'wechat', forged)).status).toBe(204);
      await nothingCredited(member, order);
      // The sandbox cannot pay it either: it is not a sandbox order.
      const sandboxPay = await member.web.fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { method: 'POST' });
      expect(sandboxPay.status).toBe(404);
      await nothingCredited(member, order);
    });

    it('an unknown provider path is 404', async () => {
      const response = await fetch(`${a.url}/api/membership/payments/paypal/notify`, { method: 'POST', body: 'x' });
      expect(response.status).toBe(404);
    });
  });

  it('a lost notice is recovered by the reconciliation job; an unpaid order expires after 2 hours', async () => {
    const member = await seed(a).member({ tag: 'lost' });
    const { order } = await checkout(member, { packageId: 'pro', provider: 'alipay', currency: 'CNY' });
    alipay.pay(order.id, order.amount);
    const idle = await seed(a).member({ tag: 'idle' });
    const unpaid = (await checkout(idle, { packageId: 'pro', provider: 'wechat', currency: 'CNY' })).order;
    const run = await jobRound(b, new Date(Date.now() + 10 * 60_000));
    expect(run.results).toContainEqual({ orderId: order.id, result: 'paid' });
    expect(await credits(order.id)).toBe(1);
    expect(await accountPackage(member.id)).toBe('pro');
    const later = await jobRound(a, new Date(Date.now() + 121 * 60_000));
    expect(later.results).toContainEqual({ orderId: unpaid.id, result: 'expired' });
    expect((await orderOf(idle, unpaid.id)).state).toBe('expired');
    const { rows } = await setup.database.query(`select action from audit_log where target_id = $1 order by id`, [unpaid.id]);
    expect(rows.map((row) => (row as { action: string }).action)).toEqual(['order:create', 'order:expire']);
  });
});

describe('the plan lifecycle', () => {
  async function sandboxPay(member: Person, packageId: string, currency = 'USD'): Promise<OrderJson> {
    const { order, payUrl } = await checkout(member, { packageId, provider: 'sandbox', currency });
    expect(payUrl).toBe(`${a.url}/payments/sandbox/${order.id}`);
    const paid = await member.web.fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { method: 'POST' });
    expect(paid.status).toBe(200);
    const json = ((await paid.json()) as { order: OrderJson }).order;
    expect(json.state).toBe('paid');
    return json;
  }

  it('sandbox: pay → Pro; upgrade to Max x5 with the unused part credited; downgrade waits for the period end; expiry returns to Free', async () => {
    const member = await seed(a).member({ tag: 'lifecycle' });
    const key = await member.key();
    await sandboxPay(member, 'pro');
    expect(await usage(a, key)).toMatchObject({ packageId: 'pro' });

    // Upgrade: the quote credits what is left of the Pro month.
    const quote = ((await (await member.web.fetch('/api/membership/checkout/quote?packageId=max_x5&currency=USD')).json()) as { quote: { kind: string; creditMinor: number; amountDueMinor: number; listMinor: number } }).quote;
    expect(quote.kind).toBe('upgrade');
    expect(quote.listMinor).toBe(1900);
    expect(quote.creditMinor).toBeGreaterThan(890);
    expect(quote.creditMinor).toBeLessThanOrEqual(900);
    const upgrade = await sandboxPay(member, 'max_x5');
    expect(upgrade.creditMinor).toBeGreaterThan(890);
    expect(upgrade.amountMinor).toBe(1900 - upgrade.creditMinor);
    expect(await usage(b, key)).toEqual({ packageId: 'max_x5', fastDay: 15_000_000 });
    let subscription = (await subscriptionOf(member))!;
    expect(subscription).toMatchObject({ packageId: 'max_x5', currentPeriodStart: upgrade.paidAt, currentPeriodEnd: oneMonthAfter(upgrade.paidAt!) });

    // Downgrade: paid now, starts at the period end.
    const down = await sandboxPay(member, 'pro');
    expect(down.amountMinor).toBe(900);
    subscription = (await subscriptionOf(member))!;
    expect(subscription).toMatchObject({ packageId: 'max_x5', nextPackageId: 'pro', currentPeriodEnd: oneMonthAfter(upgrade.paidAt!) });
    expect(await accountPackage(member.id)).toBe('max_x5');
    // A second downgrade is refused while one waits.
    const again = await member.web.fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'sandbox', currency: 'USD' } });
    expect(again.status).toBe(400);

    // Cancel and resume.
    const cancelled = await member.web.fetch('/api/membership/subscription/cancel', { method: 'POST' });
    expect(((await cancelled.json()) as { subscription: SubscriptionJson }).subscription).toMatchObject({ state: 'cancelled', cancelAtPeriodEnd: true });
    const resumed = await member.web.fetch('/api/membership/subscription/resume', { method: 'POST' });
    expect(((await resumed.json()) as { subscription: SubscriptionJson }).subscription).toMatchObject({ state: 'active', cancelAtPeriodEnd: false });

    // The period ends: Pro starts (for one month from the old end), then that ends too: Free.
    const end = new Date(subscription.currentPeriodEnd);
    expect(await a.app.services.subscriptions.runPeriodEnd(new Date(end.getTime() + 1000))).toBeGreaterThanOrEqual(1);
    expect(await accountPackage(member.id)).toBe('pro');
    expect(await usage(b, key)).toMatchObject({ packageId: 'pro' });
    subscription = (await subscriptionOf(member))!;
    expect(subscription).toMatchObject({ packageId: 'pro', currentPeriodStart: end.toISOString(), currentPeriodEnd: addMonths(end, 1, 'UTC', new Date(upgrade.paidAt!).getUTCDate()).toISOString(), nextPackageId: null });
    const proEnd = new Date(subscription.currentPeriodEnd);
    // Two instances run the job at the same moment: the term ends once.
    const ran = await Promise.all([a.app.services.subscriptions.runPeriodEnd(new Date(proEnd.getTime() + 1000)), b.app.services.subscriptions.runPeriodEnd(new Date(proEnd.getTime() + 1000))]);
    expect(ran.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(1);
    expect(await accountPackage(member.id)).toBe('free');
    expect(await usage(a, key)).toEqual({ packageId: 'free', fastDay: 200_000 });
    const { rows } = await setup.database.query(`select count(*)::int as n from audit_log where action = 'subscription:expire' and target_id = $1`, [member.id]);
    expect((rows[0] as { n: number }).n).toBe(1);
  });

  it('renewal: the same package again adds a month after the current end', async () => {
    const member = await seed(a).member({ tag: 'renew' });
    const first = await sandboxPay(member, 'pro');
    await sandboxPay(member, 'pro');
    const subscription = (await subscriptionOf(member))!;
    expect(subscription.currentPeriodStart).toBe(first.paidAt);
    expect(subscription.currentPeriodEnd).toBe(addMonths(new Date(first.paidAt!), 2, 'UTC').toISOString());
  });

  it('the sandbox fail button fails the order; nothing changes', async () => {
    const member = await seed(a).member({ tag: 'declined' });
    const { order } = await checkout(member, { packageId: 'pro', provider: 'sandbox', currency: 'CNY' });
    const failed = await member.web.fetch(`/api/membership/payments/sandbox/${order.id}/fail`, { method: 'POST' });
    expect(((await failed.json()) as { order: OrderJson }).order.state).toBe('failed');
    expect(await accountPackage(member.id)).toBe('free');
    const payAfter = await member.web.fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { method: 'POST' });
    expect(payAfter.status).toBe(400);
  });

  it('orderUpdated: a watcher on instance B sees the order paid on instance A', async () => {
    const member = await seed(a).member({ tag: 'watcher' });
    const { order } = await checkout(member, { packageId: 'pro', provider: 'sandbox', currency: 'USD' });
    const headers = { cookie: `svc_membership_session=${member.web.cookie}`, origin: b.url };
    const CookieSocket = class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers });
      }
    };
    const client = createClient({ url: `${b.url.replace('http', 'ws')}/graphql`, webSocketImpl: CookieSocket, retryAttempts: 0 });
    const states: string[] = [];
    try {
      const done = new Promise<void>((resolve, reject) => {
        client.subscribe<{ orderUpdated: { state: string } }>(
          { query: 'subscription($id: ID!) { orderUpdated(orderId: $id) { id state } }', variables: { id: order.id } },
          {
            next: (result) => {
              if (result.errors) reject(new Error(JSON.stringify(result.errors)));
              const state = result.data?.orderUpdated.state;
              if (state) states.push(state);
              if (state === 'paid') resolve();
            },
            error: reject,
            complete: () => undefined,
          },
        );
      });
      await expect.poll(() => states).toEqual(['created']);
      const paid = await member.web.fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { method: 'POST' });
      expect(paid.status).toBe(200);
      await done;
      expect(states).toEqual(['created', 'paid']);
    } finally {
      await client.dispose();
    }
  });
});

describe('GraphQL and staff', () => {
  it('members check out and read their subscription over GraphQL; staff look orders up, re-query, and admins refund', async () => {
    const member = await seed(a).member({ tag: 'gql' });
    const created = await member.web.graphql<{ checkout: { order: { id: string; amount: string; state: string }; payUrl: string | null; qrCode: string | null } }>(
      'mutation { checkout(packageId: "pro", provider: wechat, currency: "CNY") { order { id amount state } payUrl qrCode } }',
    );
    expect(created.errors).toBeUndefined();
    const order = created.data!.checkout.order;
    expect(order).toMatchObject({ amount: '65.00', state: 'created' });
    expect(created.data!.checkout.qrCode).toMatch(/^weixin:/);
    const paid = wechat.pay(order.id, 6500);

    const support = await seed(a).staff('support');
    const admin = await seed(a).staff('admin');
    // Members cannot use the staff queries.
    expect((await member.web.graphql(`{ staffOrder(key: "${order.id}") { id } }`)).errors?.[0]?.extensions?.code).toBe('forbidden');
    // Support re-queries: the lost notification is applied.
    const requery = await support.web.graphql<{ requeryOrder: { result: string; order: { state: string } } }>('mutation($id: ID!) { requeryOrder(id: $id) { result order { state } } }', { id: order.id });
    expect(requery.data?.requeryOrder).toEqual({ result: 'paid', order: { state: 'paid' } });
    // Lookup by the provider's trade number, with the stored notices.
    const found = await support.web.graphql<{ staffOrder: { id: string; notices: { outcome: string; source: string }[] } }>('query($key: String!) { staffOrder(key: $key) { id notices { outcome source } } }', {
      key: paid.transaction_id,
    });
    expect(found.data?.staffOrder).toEqual({ id: order.id, notices: [{ outcome: 'applied', source: 'query' }] });
    const account = await support.web.graphql<{ account: { orders: { id: string }[]; subscription: { packageId: string } } }>('query($id: ID!) { account(id: $id) { orders { id } subscription { packageId } } }', { id: member.id });
    expect(account.data?.account).toEqual({ orders: [{ id: order.id }], subscription: { packageId: 'pro' } });
    const mine = await member.web.graphql<{ subscription: { packageId: string; state: string }; orders: { id: string; state: string }[] }>('{ subscription { packageId state } orders { id state } }');
    expect(mine.data).toEqual({ subscription: { packageId: 'pro', state: 'active' }, orders: [{ id: order.id, state: 'paid' }] });

    // Refund: support may not; admin may, with a reason; the month is taken back.
    const denied = await support.web.graphql('mutation($id: ID!) { refundOrder(id: $id, reason: "asked") { state } }', { id: order.id });
    expect(denied.errors?.[0]?.extensions?.code).toBe('forbidden');
    const noReason = await admin.web.fetch(`/api/membership/staff/orders/${order.id}/refund`, { body: { reason: ' ' } });
    expect(noReason.status).toBe(400);
    const refunded = await admin.web.graphql<{ refundOrder: { state: string; refundReason: string } }>('mutation($id: ID!) { refundOrder(id: $id, reason: "charged twice") { state refundReason } }', { id: order.id });
    expect(refunded.data?.refundOrder).toEqual({ state: 'refunded', refundReason: 'charged twice' });
    expect(await accountPackage(member.id)).toBe('free');
    const { rows } = await setup.database.query(`select action, actor_id, reason from audit_log where target_id = $1 order by id`, [order.id]);
    expect(rows).toEqual([
      { action: 'order:create', actor_id: member.id, reason: null },
      { action: 'order:paid', actor_id: null, reason: null },
      { action: 'order:requery', actor_id: support.id, reason: null },
      { action: 'order:refund', actor_id: admin.id, reason: 'charged twice' },
    ]);
  });
});

describe('REST for staff, and what members may not do', () => {
  it('support looks an order up by provider trade number and re-queries it; members get 403; the audit log has each change', async () => {
    const member = await seed(a).member({ tag: 'rest-staff' });
    const { order } = await checkout(member, { packageId: 'max_x20', provider: 'alipay', currency: 'CNY' });
    const trade = alipay.pay(order.id, order.amount);
    const support = await seed(a).staff('support');
    expect((await member.web.fetch(`/api/membership/staff/orders/${order.id}`)).status).toBe(403);
    expect((await member.web.fetch(`/api/membership/staff/orders/${order.id}/requery`, { method: 'POST' })).status).toBe(403);

    const requery = await support.web.fetch(`/api/membership/staff/orders/${order.id}/requery`, { method: 'POST' });
    expect(await requery.json()).toMatchObject({ ok: true, result: 'paid', order: { id: order.id, state: 'paid', providerTradeNo: trade.tradeNo } });
    const byTrade = await support.web.fetch(`/api/membership/staff/orders/${trade.tradeNo}`);
    expect(await byTrade.json()).toMatchObject({ ok: true, order: { id: order.id, accountId: member.id, notices: [{ source: 'query', outcome: 'applied', verified: true }] } });
    const list = (await (await support.web.fetch(`/api/membership/staff/orders?accountId=${member.id}`)).json()) as { orders: { id: string }[] };
    expect(list.orders.map((row) => row.id)).toEqual([order.id]);
    expect((await support.web.fetch('/api/membership/staff/orders?accountId=nope')).status).toBe(400);
    expect((await support.web.fetch('/api/membership/staff/orders/svcNoSuchOrder')).status).toBe(404);
    // Refunds are for admins.
    expect((await support.web.fetch(`/api/membership/staff/orders/${order.id}/refund`, { body: { reason: 'asked' } })).status).toBe(403);
    const admin = await seed(a).staff('admin');
    const refunded = await admin.web.fetch(`/api/membership/staff/orders/${order.id}/refund`, { body: { reason: 'asked for it' } });
    expect(await refunded.json()).toMatchObject({ ok: true, order: { state: 'refunded', refundReason: 'asked for it' } });
    expect(alipay.trades.get(order.id)!.refunds.get(`${order.id}R1`)).toBe(order.amount);
    expect((await admin.web.fetch(`/api/membership/staff/orders/${order.id}/refund`, { body: { reason: 'again' } })).status).toBe(409);
    expect(await accountPackage(member.id)).toBe('free');
    const { rows } = await setup.database.query(`select action from audit_log where target_id = $1 order by id`, [order.id]);
    expect(rows.map((row) => (row as { action: string }).action)).toEqual(['order:create', 'order:paid', 'order:requery', 'order:refund']);
    const accountRows = await setup.database.query(`select action, reason from audit_log where target_id = $1 order by id`, [member.id]);
    expect(accountRows.rows.map((row) => (row as { action: string }).action)).toEqual(['subscription:start', 'account:set-package', 'subscription:refund', 'account:set-package']);
  });

  it('an upgrade is paid in the currency of the current period', async () => {
    const member = await seed(a).member({ tag: 'currency' });
    const { order } = await checkout(member, { packageId: 'pro', provider: 'alipay', currency: 'CNY' });
    expect((await notify(a, 'alipay', alipayPaid(order))).body).toBe('success');
    const card = await member.web.fetch('/api/membership/checkout', { body: { packageId: 'max_x5', provider: 'stripe', currency: 'USD' } });
    expect(card.status).toBe(400);
    expect(await card.json()).toMatchObject({ code: 'invalid_request', error: { param: 'currency' } });
    const quote = (await (await member.web.fetch('/api/membership/checkout/quote?packageId=max_x5&currency=CNY')).json()) as { quote: { kind: string; creditMinor: number; amountDueMinor: number } };
    expect(quote.quote.kind).toBe('upgrade');
    expect(quote.quote.creditMinor + quote.quote.amountDueMinor).toBe(13_800);
  });

  it('orderUpdated refuses another member’s order', async () => {
    const owner = await seed(a).member({ tag: 'owner' });
    const { order } = await checkout(owner, { packageId: 'pro', provider: 'sandbox', currency: 'USD' });
    const other = await seed(a).member({ tag: 'other' });
    const headers = { cookie: `svc_membership_session=${other.web.cookie}`, origin: a.url };
    const CookieSocket = class extends WebSocket {
      constructor(address: string, protocols?: string | string[]) {
        super(address, protocols, { headers });
      }
    };
    const client = createClient({ url: `${a.url.replace('http', 'ws')}/graphql`, webSocketImpl: CookieSocket, retryAttempts: 0 });
    try {
      const outcome = await new Promise<unknown>((resolve) => {
        client.subscribe(
          { query: 'subscription($id: ID!) { orderUpdated(orderId: $id) { id state } }', variables: { id: order.id } },
          { next: (result) => resolve(result), error: (error) => resolve(error), complete: () => resolve('complete') },
        );
      });
      expect(JSON.stringify(outcome)).toContain('not_found');
    } finally {
      await client.dispose();
    }
    // And the sandbox pay endpoint refuses it too.
    expect((await other.web.fetch(`/api/membership/payments/sandbox/${order.id}/pay`, { method: 'POST' })).status).toBe(404);
  });
});

describe('the sandbox over GraphQL', () => {
  it('checkout, sandboxPayOrder, then subscription, checkoutQuote and plan prices', async () => {
    const member = await seed(a).member({ tag: 'gql-sandbox' });
    const created = await member.web.graphql<{ checkout: { order: { id: string; state: string }; payUrl: string } }>('mutation { checkout(packageId: "max_x20", provider: sandbox, currency: "USD") { order { id state } payUrl } }');
    const id = created.data!.checkout.order.id;
    expect(created.data!.checkout.payUrl).toBe(`${a.url}/payments/sandbox/${id}`);
    const paid = await member.web.graphql<{ sandboxPayOrder: { state: string; amount: string } }>('mutation($id: ID!) { sandboxPayOrder(orderId: $id) { state amount } }', { id });
    expect(paid.data?.sandboxPayOrder).toEqual({ state: 'paid', amount: '39.00' });
    const again = await member.web.graphql('mutation($id: ID!) { sandboxPayOrder(orderId: $id) { state } }', { id });
    expect(again.errors?.[0]?.extensions?.code).toBe('invalid_request');
    const read = await member.web.graphql<{
      subscription: { packageId: string; planId: string; state: string };
      checkoutQuote: { kind: string; amountDue: string };
      plans: { packages: { id: string; prices: { currency: string; amount: string; amountMinor: number }[] }[] }[];
    }>('{ subscription { packageId planId state } checkoutQuote(packageId: "pro", currency: "USD") { kind amountDue } plans { packages { id prices { currency amount amountMinor } } } }');
    expect(read.data?.subscription).toEqual({ packageId: 'max_x20', planId: 'max', state: 'active' });
    expect(read.data?.checkoutQuote).toEqual({ kind: 'downgrade', amountDue: '9.00' });
    const pro = read.data!.plans.flatMap((plan) => plan.packages).find((pkg) => pkg.id === 'pro')!;
    expect(pro.prices).toEqual([
      { currency: 'USD', amount: '9.00', amountMinor: 900 },
      { currency: 'CNY', amount: '65.00', amountMinor: 6500 },
    ]);
  });
});

describe('the reconciliation lease', () => {
  it('two instances starting a round at once: one of them reconciles', async () => {
    const runs = await Promise.all([a.app.services.billingJobs.runOnce(), b.app.services.billingJobs.runOnce()]);
    expect(runs.filter((run) => run.reconcile !== null).length).toBeLessThanOrEqual(1);
    // The lease is released after the round: the next round runs.
    expect((await jobRound(a, new Date())).checked).toBeGreaterThanOrEqual(0);
  });
});
