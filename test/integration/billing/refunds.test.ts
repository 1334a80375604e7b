/**
 * Refunds whose money is still on its way (issue 46): WeChat Pay answers a refund `PROCESSING`; the order
 * is `refund_pending` — the package stays, nothing counts as refunded — until SUCCESS arrives, by the
 * provider's REFUND.SUCCESS notice or by the refund query (reconciliation or a staff re-query). CLOSED
 * and ABNORMAL are failed refunds, shown to staff, who may refund again under a new refund id. Through
 * the real app on two instances over real PostgreSQL and Redis, with the WeChat Pay fake signing and
 * encrypting as WeChat Pay does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawNotification } from '../../../server/modules/billing/providers/provider.ts';
import { startWechatFake, type WechatFake } from '../../fixtures/wechat-fake.ts';
import { realMode, startApp, type TestApp } from '../../helpers/app.ts';
import { seed, type Person } from '../../helpers/seed.ts';

let setup: Awaited<ReturnType<typeof realMode>>;
let a: TestApp;
let b: TestApp;
let wechat: WechatFake;
let admin: Person;

interface StaffOrder {
  id: string;
  state: string;
  refundedAt: string | null;
  refundRequestedAt: string | null;
  refundFailure: string | null;
  refundReason: string | null;
}

const staffOrderFields = 'id state refundedAt refundRequestedAt refundFailure refundReason';

beforeAll(async () => {
  setup = await realMode();
  wechat = await startWechatFake();
  const { config, env } = wechat.config();
  const options = { config: { payments: { wechat: config }, rateLimits: { ipPerMinute: 100_000 } }, env };
  a = await startApp(setup.config, options);
  b = await startApp(setup.config, options);
  admin = await seed(a).staff('admin');
});

afterAll(async () => {
  await Promise.allSettled([a?.close(), b?.close()]);
  await wechat?.close();
  await setup?.cleanup();
});

async function notify(app: TestApp, notice: RawNotification): Promise<number> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(notice.headers)) if (typeof value === 'string') headers[name] = value;
  const response = await fetch(`${app.url}/api/membership/payments/wechat/notify`, { method: 'POST', headers, body: new Uint8Array(notice.body) });
  await response.arrayBuffer();
  return response.status;
}

/** A member on Pro, paid through WeChat Pay. */
async function paidMember(tag: string): Promise<{ member: Person; orderId: string }> {
  const member = await seed(a).member({ tag });
  const response = await member.web.at(a.url).fetch('/api/membership/checkout', { body: { packageId: 'pro', provider: 'wechat', currency: 'CNY' } });
  const { order } = (await response.json()) as { order: { id: string; amountMinor: number } };
  expect(await notify(a, wechat.notice(wechat.pay(order.id, order.amountMinor)))).toBe(204);
  expect(await accountPackage(member.id)).toBe('pro');
  return { member, orderId: order.id };
}

async function refund(orderId: string, reason = 'asked for it'): Promise<StaffOrder> {
  const result = await admin.web.graphql<{ refundOrder: StaffOrder }>(`mutation($id: ID!, $reason: String!) { refundOrder(id: $id, reason: $reason) { ${staffOrderFields} } }`, { id: orderId, reason });
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data!.refundOrder;
}

async function staffOrder(orderId: string, app: TestApp = a): Promise<StaffOrder> {
  const result = await admin.web.at(app.url).graphql<{ staffOrder: StaffOrder }>(`query($key: String!) { staffOrder(key: $key) { ${staffOrderFields} } }`, { key: orderId });
  return result.data!.staffOrder;
}

async function accountPackage(accountId: string): Promise<string> {
  const { rows } = await setup.database.query('select plan_package from account where id = $1', [accountId]);
  return (rows[0] as { plan_package: string }).plan_package;
}

async function auditActions(orderId: string): Promise<string[]> {
  const { rows } = await setup.database.query(`select action from audit_log where target_type = 'order' and target_id = $1 order by at, id`, [orderId]);
  return (rows as { action: string }[]).map((row) => row.action);
}

async function subscriptionRefunds(accountId: string): Promise<number> {
  const { rows } = await setup.database.query(`select count(*)::int as n from audit_log where action = 'subscription:refund' and target_id = $1`, [accountId]);
  return (rows[0] as { n: number }).n;
}

/** One round of the payment jobs at `now` on `app`, once it holds the reconciliation lease. */
async function jobRound(app: TestApp, now: Date) {
  for (;;) {
    const run = await app.app.services.billingJobs.runOnce(now);
    if (run.reconcile) return run.reconcile;
  }
}

function withRefundStatus<T>(status: WechatFake['refundStatus'], work: () => Promise<T>): Promise<T> {
  wechat.refundStatus = status;
  return work().finally(() => (wechat.refundStatus = 'SUCCESS'));
}

describe('a WeChat Pay refund that is PROCESSING', () => {
  it('stays refund_pending, the package kept, until REFUND.SUCCESS arrives; then it is refunded once', async () => {
    const { member, orderId } = await paidMember('processing');
    const pending = await withRefundStatus('PROCESSING', () => refund(orderId));
    expect(pending).toMatchObject({ state: 'refund_pending', refundedAt: null, refundRequestedAt: expect.any(String), refundReason: 'asked for it' });
    expect(await accountPackage(member.id)).toBe('pro');
    expect(await auditActions(orderId)).toEqual(['order:create', 'order:paid', 'order:refund-request']);
    // The member sees it on its way, not done.
    const own = (await (await member.web.fetch(`/api/membership/orders/${orderId}`)).json()) as { order: { state: string; refundedAt: string | null } };
    expect(own.order).toMatchObject({ state: 'refund_pending', refundedAt: null });

    const success = wechat.refundNotice(`${orderId}R1`, 'SUCCESS');
    expect(await Promise.all([notify(b, success), notify(a, success), notify(b, success)])).toEqual([204, 204, 204]);
    expect(await staffOrder(orderId, b)).toMatchObject({ state: 'refunded', refundedAt: expect.any(String) });
    expect(await accountPackage(member.id)).toBe('free');
    expect(await auditActions(orderId)).toEqual(['order:create', 'order:paid', 'order:refund-request', 'order:refund']);
    expect(await subscriptionRefunds(member.id)).toBe(1);
    // A refund is asked for once per attempt.
    expect([...wechat.refunds.values()].filter((entry) => entry.out_trade_no === orderId).map((entry) => entry.out_refund_no)).toEqual([`${orderId}R1`]);
  });

  it('is settled by the refund query when the notice never comes: the reconciliation job, or staff asking again', async () => {
    const first = await paidMember('query-job');
    const second = await paidMember('query-staff');
    await withRefundStatus('PROCESSING', async () => {
      await refund(first.orderId);
      await refund(second.orderId);
    });
    // Still processing at WeChat Pay: a round changes nothing.
    const waiting = await jobRound(a, new Date(Date.now() + 2 * 60_000));
    expect(waiting.results).toEqual(expect.arrayContaining([{ orderId: first.orderId, result: 'pending' }]));
    expect((await staffOrder(first.orderId)).state).toBe('refund_pending');

    wechat.refunds.get(`${first.orderId}R1`)!.status = 'SUCCESS';
    wechat.refunds.get(`${second.orderId}R1`)!.status = 'SUCCESS';
    const requery = await admin.web.fetch(`/api/membership/staff/orders/${second.orderId}/requery`, { method: 'POST' });
    expect(((await requery.json()) as { result: string; order: { state: string } })).toMatchObject({ result: 'refunded', order: { state: 'refunded' } });
    const round = await jobRound(b, new Date(Date.now() + 2 * 60_000));
    expect(round.results).toEqual(expect.arrayContaining([{ orderId: first.orderId, result: 'refunded' }]));
    for (const { member, orderId } of [first, second]) {
      expect((await staffOrder(orderId)).state).toBe('refunded');
      expect(await accountPackage(member.id)).toBe('free');
      expect(await subscriptionRefunds(member.id)).toBe(1);
    }
  });

  it('a SUCCESS notice and a refund query on two instances at once take the month back once', async () => {
    const { member, orderId } = await paidMember('race');
    await withRefundStatus('PROCESSING', () => refund(orderId));
    wechat.refunds.get(`${orderId}R1`)!.status = 'SUCCESS';
    const success = wechat.refundNotice(`${orderId}R1`, 'SUCCESS');
    await Promise.all([
      notify(a, success),
      notify(b, success),
      admin.web.at(b.url).fetch(`/api/membership/staff/orders/${orderId}/requery`, { method: 'POST' }),
      admin.web.at(a.url).fetch(`/api/membership/staff/orders/${orderId}/requery`, { method: 'POST' }),
    ]);
    expect((await staffOrder(orderId)).state).toBe('refunded');
    expect((await auditActions(orderId)).filter((action) => action === 'order:refund')).toHaveLength(1);
    expect(await subscriptionRefunds(member.id)).toBe(1);
  });
});

describe('a refund WeChat Pay gives up (CLOSED, ABNORMAL)', () => {
  it('is shown to staff as a failed refund, keeps the package, and a new refund tries again under a new refund id', async () => {
    const { member, orderId } = await paidMember('abnormal');
    await withRefundStatus('PROCESSING', () => refund(orderId));
    expect(await notify(b, wechat.refundNotice(`${orderId}R1`, 'ABNORMAL'))).toBe(204);
    expect(await staffOrder(orderId)).toMatchObject({ state: 'refund_failed', refundFailure: 'ABNORMAL', refundedAt: null });
    expect(await accountPackage(member.id)).toBe('pro');
    expect(await auditActions(orderId)).toEqual(['order:create', 'order:paid', 'order:refund-request', 'order:refund-fail']);
    // Staff find it among the failed refunds; members are not told the provider's words.
    const failed = await admin.web.graphql<{ staffOrders: { id: string }[] }>('{ staffOrders(state: refund_failed) { id } }');
    expect(failed.data!.staffOrders.map((order) => order.id)).toContain(orderId);
    const own = await member.web.graphql<{ orders: { id: string; state: string; refundFailure: string | null }[] }>('{ orders { id state refundFailure } }');
    expect(own.data!.orders.find((order) => order.id === orderId)).toEqual({ id: orderId, state: 'refund_failed', refundFailure: null });

    // The same notice again changes nothing; refunding again asks WeChat Pay under R2, which succeeds.
    expect(await notify(a, wechat.refundNotice(`${orderId}R1`, 'ABNORMAL'))).toBe(204);
    expect(await refund(orderId, 'second try')).toMatchObject({ state: 'refunded', refundFailure: null, refundReason: 'second try' });
    expect([...wechat.refunds.values()].filter((entry) => entry.out_trade_no === orderId).map((entry) => entry.out_refund_no)).toEqual([`${orderId}R1`, `${orderId}R2`]);
    expect(await accountPackage(member.id)).toBe('free');
    // A late notice about the first attempt says nothing about the order now.
    expect(await notify(b, wechat.refundNotice(`${orderId}R1`, 'CLOSED'))).toBe(204);
    expect((await staffOrder(orderId)).state).toBe('refunded');
    expect(await subscriptionRefunds(member.id)).toBe(1);
  });

  it('a refund closed at once is failed, not an error, and not refunded', async () => {
    const { member, orderId } = await paidMember('closed');
    expect(await withRefundStatus('CLOSED', () => refund(orderId))).toMatchObject({ state: 'refund_failed', refundFailure: 'CLOSED', refundedAt: null });
    expect(await accountPackage(member.id)).toBe('pro');
  });

  it('a refund notice for another amount is rejected and stored, changing nothing', async () => {
    const { orderId } = await paidMember('amount');
    await withRefundStatus('PROCESSING', () => refund(orderId));
    const entry = wechat.refunds.get(`${orderId}R1`)!;
    entry.amount = { ...entry.amount, refund: 1 };
    expect(await notify(a, wechat.refundNotice(`${orderId}R1`, 'SUCCESS'))).toBe(204);
    expect((await staffOrder(orderId)).state).toBe('refund_pending');
    const { rows } = await setup.database.query(`select outcome, reason, status from billing_notice where order_id = $1 and outcome = 'rejected'`, [orderId]);
    expect(rows).toEqual([{ outcome: 'rejected', reason: 'refund_amount_mismatch', status: 'refunded' }]);
  });
});
