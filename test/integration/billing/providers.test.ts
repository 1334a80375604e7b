/**
 * Each payment provider against a local fake that signs like the real service, with keys made here:
 * checkout, notification verification (and every way it must fail), query, close and refund.
 */
import { randomBytes, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { NotificationError, ProviderCallError, type PaymentProvider, type ProviderOrder, type RawNotification } from '../../../server/modules/billing/providers/provider.ts';
import { PaymentProviders } from '../../../server/modules/billing/providers/registry.ts';
import { SandboxProvider } from '../../../server/modules/billing/providers/sandbox.provider.ts';
import { alipaySignContent, startAlipayFake, tamperForm, type AlipayFake } from '../../fixtures/alipay-fake.ts';
import { rsaKeys } from '../../fixtures/payment-keys.ts';
import { startStripeFake, type StripeFake } from '../../fixtures/stripe-fake.ts';
import { startWechatFake, type WechatFake } from '../../fixtures/wechat-fake.ts';

function order(overrides: Partial<ProviderOrder> = {}): ProviderOrder {
  const now = Date.now();
  return {
    id: `svc${randomBytes(12).toString('hex').slice(0, 24)}`,
    amountMinor: 6500,
    currency: 'CNY',
    description: 'svc Pro — 1 month',
    createdAt: new Date(now),
    expiresAt: new Date(now + 2 * 3600_000),
    providerTradeNo: null,
    ...overrides,
  };
}

function providers(payments: Record<string, unknown>, env: Record<string, string>): PaymentProviders {
  return new PaymentProviders(parseConfig({ server: { baseUrl: 'https://svc.example' }, payments }, env));
}

async function rejection(promise: Promise<unknown>): Promise<NotificationError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(NotificationError);
  return error as NotificationError;
}

function tamperJson(notice: RawNotification, edit: (text: string) => string): RawNotification {
  return { ...notice, body: Buffer.from(edit(notice.body.toString('utf8'))) };
}

describe('alipay', () => {
  let fake: AlipayFake;
  let alipay: PaymentProvider;

  beforeAll(async () => {
    fake = await startAlipayFake();
    const { config, env } = fake.config();
    alipay = providers({ alipay: config }, env).require('alipay');
  });
  afterAll(() => fake.close());

  it('desktop checkout is a signed alipay.trade.page.pay redirect built without a server call', async () => {
    const calls = fake.calls.length;
    const subject = order();
    const { payUrl, qrCode } = await alipay.createPayment(subject, { returnUrl: 'https://svc.example/account/orders/x' });
    expect(qrCode).toBeUndefined();
    expect(fake.calls.length).toBe(calls);
    const url = new URL(payUrl!);
    expect(`${url.origin}${url.pathname}`).toBe(fake.gateway);
    const params = Object.fromEntries(url.searchParams);
    expect(params).toMatchObject({
      method: 'alipay.trade.page.pay',
      app_id: fake.appId,
      sign_type: 'RSA2',
      notify_url: 'https://svc.example/api/membership/payments/alipay/notify',
      return_url: 'https://svc.example/account/orders/x',
    });
    const biz = JSON.parse(params.biz_content!) as Record<string, string>;
    expect(biz).toMatchObject({ out_trade_no: subject.id, total_amount: '65.00', product_code: 'FAST_INSTANT_TRADE_PAY' });
    expect(biz.time_expire).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const content = Object.keys(params).filter((key) => key !== 'sign').sort().map((key) => `${key}=${params[key]}`).join('&');
    expect(verify('sha256', Buffer.from(content), fake.app.publicKey, Buffer.from(params.sign!, 'base64'))).toBe(true);
  });

  it('mobile checkout uses alipay.trade.wap.pay', async () => {
    const { payUrl } = await alipay.createPayment(order({ amountMinor: 13_800 }), { device: 'mobile', returnUrl: 'https://svc.example/r' });
    const params = new URL(payUrl!).searchParams;
    expect(params.get('method')).toBe('alipay.trade.wap.pay');
    expect(JSON.parse(params.get('biz_content')!)).toMatchObject({ total_amount: '138.00', product_code: 'QUICK_WAP_WAY', quit_url: 'https://svc.example/r' });
  });

  it('refuses to charge anything but CNY', async () => {
    await expect(alipay.createPayment(order({ currency: 'USD', amountMinor: 900 }), { returnUrl: 'https://svc.example/r' })).rejects.toThrow(ProviderCallError);
  });

  it('a genuine notification parses into a notice in fen', async () => {
    const parsed = await alipay.parseNotification(fake.notice({ out_trade_no: 'svcA1', trade_no: '2026T1', total_amount: '65.00', notify_id: 'n-1' }));
    expect(parsed).toMatchObject({
      kind: 'notice',
      notice: {
        provider: 'alipay',
        orderId: 'svcA1',
        providerTradeNo: '2026T1',
        amountMinor: 6500,
        currency: 'CNY',
        appId: fake.appId,
        merchantId: fake.sellerId,
        status: 'paid',
        eventId: 'n-1',
        source: 'notify',
      },
    });
  });

  it.each([
    ['TRADE_SUCCESS', 'paid'],
    ['TRADE_FINISHED', 'paid'],
    ['WAIT_BUYER_PAY', 'pending'],
    ['TRADE_CLOSED', 'failed'],
  ])('trade_status %s counts as %s', async (tradeStatus, status) => {
    const parsed = await alipay.parseNotification(fake.notice({ out_trade_no: 'svcA2', trade_no: 'T2', total_amount: '0.01', trade_status: tradeStatus }));
    expect(parsed.kind === 'notice' && parsed.notice.status).toBe(status);
  });

  it('sign_type and sign are left out of the signed content, which also survives URL-encoding of Chinese and symbols', async () => {
    const notice = fake.notice({ out_trade_no: 'svcA3', trade_no: 'T3', total_amount: '9.90', subject: '会员 & 100% = 好' });
    const params = Object.fromEntries(new URLSearchParams(notice.body.toString('utf8')));
    expect(verify('sha256', Buffer.from(alipaySignContent(params)), fake.alipay.publicKey, Buffer.from(params.sign!, 'base64'))).toBe(true);
    expect((await alipay.parseNotification(notice)).kind).toBe('notice');
  });

  it('a tampered amount fails verification', async () => {
    const notice = tamperForm(fake.notice({ out_trade_no: 'svcA4', trade_no: 'T4', total_amount: '0.01' }), { total_amount: '65.00' });
    expect((await rejection(alipay.parseNotification(notice))).reason).toBe('bad_signature');
  });

  it('a notification signed with a foreign key fails verification', async () => {
    const notice = fake.notice({ out_trade_no: 'svcA5', trade_no: 'T5', total_amount: '65.00' }, { signWith: rsaKeys().privateKey });
    expect((await rejection(alipay.parseNotification(notice))).reason).toBe('bad_signature');
  });

  it('an RSA (SHA-1) sign_type is refused as a downgrade', async () => {
    const notice = fake.notice({ out_trade_no: 'svcA6', trade_no: 'T6', total_amount: '65.00' }, { signType: 'RSA' });
    expect((await rejection(alipay.parseNotification(notice))).reason).toBe('unsupported_algorithm');
  });

  it.each([
    ['no sign', (n: RawNotification) => ({ ...n, body: Buffer.from(new URLSearchParams([...new URLSearchParams(n.body.toString())].filter(([k]) => k !== 'sign')).toString()) })],
    ['a repeated parameter', (n: RawNotification) => ({ ...n, body: Buffer.from(`${n.body.toString()}&total_amount=0.01`) })],
  ])('%s is malformed', async (_label, edit) => {
    const notice = edit(fake.notice({ out_trade_no: 'svcA7', trade_no: 'T7', total_amount: '65.00' }));
    expect((await rejection(alipay.parseNotification(notice))).reason).toBe('malformed');
  });

  it.each(['65.001', '6.5e1', '-65.00', '65,00'])('a signed total_amount %s is not taken as money', async (amount) => {
    const notice = fake.notice({ out_trade_no: 'svcA8', trade_no: 'T8', total_amount: amount });
    expect((await rejection(alipay.parseNotification(notice))).reason).toBe('malformed');
  });

  it('query, close and refund go through the gateway with verified answers', async () => {
    const unpaid = order();
    expect(await alipay.query(unpaid)).toBeNull();
    await alipay.close(unpaid); // never opened: nothing to close
    const paid = order();
    const trade = fake.pay(paid.id, '65.00');
    const notice = await alipay.query(paid);
    expect(notice).toMatchObject({ orderId: paid.id, providerTradeNo: trade.tradeNo, amountMinor: 6500, status: 'paid', source: 'query', appId: fake.appId, merchantId: fake.sellerId });
    await expect(alipay.close(paid)).rejects.toThrow(ProviderCallError);
    expect(await alipay.refund(paid, { refundId: `${paid.id}R1`, amountMinor: 6500, reason: 'test' })).toEqual({ providerRefundId: trade.tradeNo, status: 'succeeded' });
    expect(await alipay.refund(paid, { refundId: `${paid.id}R1`, amountMinor: 6500, reason: 'test' })).toMatchObject({ status: 'succeeded' });
    expect(trade.refunds.size).toBe(1);
    expect(fake.calls.every((call) => call.signatureValid)).toBe(true);
  });

  it('an answer that is not signed by the configured Alipay key is not believed', async () => {
    const { config, env } = fake.config();
    const suspicious = providers({ alipay: { ...config, alipayPublicKey: rsaKeys().publicPem } }, env).require('alipay');
    const paid = order();
    fake.pay(paid.id, '65.00');
    await expect(suspicious.query(paid)).rejects.toThrow(ProviderCallError);
  });

  it('acks in Alipay’s own words', () => {
    expect(alipay.ackSuccess()).toMatchObject({ status: 200, body: 'success' });
    expect(alipay.ackFailure('rejected').body).toBe('fail');
  });
});

describe.each(['publicKey', 'certificate'] as const)('wechat (platform %s)', (mode) => {
  let fake: WechatFake;
  let wechat: PaymentProvider;

  beforeAll(async () => {
    fake = await startWechatFake({ mode });
    const { config, env } = fake.config();
    wechat = providers({ wechat: config }, env).require('wechat');
  });
  afterAll(() => fake.close());

  const transaction = (orderId: string, total = 6500) => ({
    appid: fake.appId,
    mchid: fake.mchId,
    out_trade_no: orderId,
    transaction_id: `4200${randomBytes(8).toString('hex')}`,
    trade_state: 'SUCCESS' as const,
    amount: { total, payer_total: total, currency: 'CNY' },
  });

  it('Native checkout returns the code_url, with a request WeChat Pay accepts as signed', async () => {
    const subject = order();
    const { qrCode, payUrl } = await wechat.createPayment(subject, { returnUrl: 'https://svc.example/r' });
    expect(payUrl).toBeUndefined();
    expect(qrCode).toMatch(/^weixin:\/\/wxpay\/bizpayurl\?pr=/);
    const call = fake.calls.at(-1)!;
    expect(call.authorized).toBe(true);
    expect(call.body).toMatchObject({
      appid: fake.appId,
      mchid: fake.mchId,
      out_trade_no: subject.id,
      notify_url: 'https://svc.example/api/membership/payments/wechat/notify',
      amount: { total: 6500, currency: 'CNY' },
    });
    expect((call.body as { time_expire: string }).time_expire).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+08:00$/);
  });

  it('a genuine notification is verified, decrypted and parsed', async () => {
    const tx = transaction('svcW1');
    const parsed = await wechat.parseNotification(fake.notice(tx));
    expect(parsed).toMatchObject({
      kind: 'notice',
      notice: { provider: 'wechat', orderId: 'svcW1', providerTradeNo: tx.transaction_id, amountMinor: 6500, currency: 'CNY', appId: fake.appId, merchantId: fake.mchId, status: 'paid' },
    });
  });

  it('a tampered body fails verification', async () => {
    const notice = tamperJson(fake.notice(transaction('svcW2')), (text) => text.replace('"summary":"', '"summary":"x'));
    expect((await rejection(wechat.parseNotification(notice))).reason).toBe('bad_signature');
  });

  it('a notification signed with a foreign key under the right serial fails verification', async () => {
    expect((await rejection(wechat.parseNotification(fake.notice(transaction('svcW3'), { signWith: rsaKeys().privateKey })))).reason).toBe('bad_signature');
  });

  it('an unknown Wechatpay-Serial names no key', async () => {
    expect((await rejection(wechat.parseNotification(fake.notice(transaction('svcW4'), { serial: 'PUB_KEY_ID_NOT_OURS' })))).reason).toBe('unknown_key');
  });

  it.each([
    ['301 s old', -301],
    ['301 s ahead', 301],
  ])('a correctly signed notification %s is stale', async (_label, offset) => {
    const notice = fake.notice(transaction('svcW5'), { timestamp: Math.floor(Date.now() / 1000) + offset });
    expect((await rejection(wechat.parseNotification(notice))).reason).toBe('stale_timestamp');
  });

  it('a notification within the window (299 s old) is accepted', async () => {
    const notice = fake.notice(transaction('svcW6'), { timestamp: Math.floor(Date.now() / 1000) - 299 });
    expect((await wechat.parseNotification(notice)).kind).toBe('notice');
  });

  it('a resource encrypted under another APIv3 key does not decrypt', async () => {
    const notice = fake.notice(transaction('svcW7'), { apiV3Key: randomBytes(16).toString('hex') });
    expect((await rejection(wechat.parseNotification(notice))).reason).toBe('decrypt_failed');
  });

  it('a refund that is PROCESSING is pending; its REFUND.* notice and the refund query say how it ended', async () => {
    const subject = order();
    await wechat.createPayment(subject, { returnUrl: 'https://svc.example/r' });
    fake.pay(subject.id, 6500);
    fake.refundStatus = 'PROCESSING';
    try {
      const refundId = `${subject.id}R1`;
      expect(await wechat.refund(subject, { refundId, amountMinor: 6500, reason: 'test' })).toMatchObject({ status: 'pending', providerStatus: 'PROCESSING' });
      // WeChat Pay is told where to say how it ended.
      expect(fake.calls.at(-1)!.body).toMatchObject({ out_refund_no: refundId, notify_url: 'https://svc.example/api/membership/payments/wechat/notify' });
      expect(await wechat.queryRefund!(subject, { refundId, providerRefundId: null })).toMatchObject({ status: 'pending', providerStatus: 'PROCESSING', source: 'query' });
      for (const [status, expected] of [
        ['ABNORMAL', 'failed'],
        ['CLOSED', 'failed'],
        ['SUCCESS', 'succeeded'],
      ] as const) {
        const parsed = await wechat.parseNotification(fake.refundNotice(refundId, status));
        expect(parsed).toMatchObject({
          kind: 'refund',
          refund: { provider: 'wechat', orderId: subject.id, refundId, amountMinor: 6500, merchantId: fake.mchId, status: expected, providerStatus: status, source: 'notify' },
        });
        expect(await wechat.queryRefund!(subject, { refundId, providerRefundId: null })).toMatchObject({ status: expected, providerStatus: status });
      }
      expect(await wechat.queryRefund!(subject, { refundId: `${subject.id}R9`, providerRefundId: null })).toBeNull();
    } finally {
      fake.refundStatus = 'SUCCESS';
    }
  });

  it('a refund WeChat Pay gives up at once (CLOSED, ABNORMAL) is failed, not an error', async () => {
    const subject = order();
    await wechat.createPayment(subject, { returnUrl: 'https://svc.example/r' });
    fake.pay(subject.id, 6500);
    fake.refundStatus = 'ABNORMAL';
    try {
      expect(await wechat.refund(subject, { refundId: `${subject.id}R1`, amountMinor: 6500, reason: 'test' })).toMatchObject({ status: 'failed', providerStatus: 'ABNORMAL' });
    } finally {
      fake.refundStatus = 'SUCCESS';
    }
  });

  it('query, close and refund', async () => {
    const subject = order();
    expect(await wechat.query(subject)).toBeNull();
    await wechat.createPayment(subject, { returnUrl: 'https://svc.example/r' });
    expect(await wechat.query(subject)).toMatchObject({ status: 'pending', amountMinor: 6500 });
    const paid = fake.pay(subject.id, 6500);
    expect(await wechat.query(subject)).toMatchObject({ status: 'paid', providerTradeNo: paid.transaction_id, source: 'query' });
    await expect(wechat.close(subject)).rejects.toThrow(ProviderCallError); // ORDERPAID
    expect(await wechat.refund(subject, { refundId: `${subject.id}R1`, amountMinor: 6500, reason: 'test' })).toMatchObject({ status: 'succeeded' });
    expect(await wechat.refund(subject, { refundId: `${subject.id}R1`, amountMinor: 6500, reason: 'test' })).toMatchObject({ status: 'succeeded' });
    expect([...fake.refunds.values()].filter((refund) => refund.out_trade_no === subject.id)).toHaveLength(1);
    const unpaid = order();
    await wechat.createPayment(unpaid, { returnUrl: 'https://svc.example/r' });
    await wechat.close(unpaid);
    expect(await wechat.query(unpaid)).toMatchObject({ status: 'failed' });
  });

  it('answers not signed by the configured platform key are not believed', async () => {
    const { config, env } = fake.config();
    const other = rsaKeys();
    const suspicious = providers(
      { wechat: { ...config, platformPublicKey: other.publicPem, platformPublicKeyId: fake.mode === 'publicKey' ? fake.serial : 'PUB_KEY_ID_OTHER', platformCertificates: [] } },
      env,
    ).require('wechat');
    // Like WeChat Pay's own SDKs, 2xx answers must be signed; an error answer is never acted on as success.
    const paid = order();
    fake.pay(paid.id, 6500);
    await expect(suspicious.query(paid)).rejects.toThrow(ProviderCallError);
    await expect(suspicious.close(order())).rejects.toThrow(ProviderCallError);
  });

  it('acks with 204 and a FAIL body on failure', () => {
    expect(wechat.ackSuccess()).toEqual({ status: 204, contentType: null, body: '' });
    expect(JSON.parse(wechat.ackFailure('error').body)).toEqual({ code: 'FAIL', message: expect.any(String) });
  });
});

describe('wechat with both platform modes configured (migrating from certificates to the public key)', () => {
  it('verifies notifications named by either serial', async () => {
    const byKey = await startWechatFake({ mode: 'publicKey' });
    try {
      const { config, env } = byKey.config({ mode: 'both' });
      const wechat = providers({ wechat: config }, env).require('wechat');
      const tx = { appid: byKey.appId, mchid: byKey.mchId, out_trade_no: 'svcWB', transaction_id: '42', trade_state: 'SUCCESS' as const, amount: { total: 100, currency: 'CNY' } };
      expect((await wechat.parseNotification(byKey.notice(tx))).kind).toBe('notice');
      expect((await wechat.parseNotification(byKey.notice(tx, { serial: byKey.certificate.serial }))).kind).toBe('notice');
    } finally {
      await byKey.close();
    }
  });
});

describe('stripe', () => {
  let fake: StripeFake;
  let stripe: PaymentProvider;

  beforeAll(async () => {
    fake = await startStripeFake();
    const { config, env } = fake.config();
    stripe = providers({ stripe: config }, env).require('stripe');
  });
  afterAll(() => fake.close());

  it('Checkout Session create carries our idempotency key; a retry gets the same session', async () => {
    const subject = order({ currency: 'USD', amountMinor: 900 });
    const first = await stripe.createPayment(subject, { returnUrl: 'https://svc.example/r' });
    const again = await stripe.createPayment(subject, { returnUrl: 'https://svc.example/r' });
    expect(first.providerTradeNo).toMatch(/^cs_test_/);
    expect(again.providerTradeNo).toBe(first.providerTradeNo);
    expect(fake.sessions.size).toBeGreaterThanOrEqual(1);
    const call = fake.calls.find((candidate) => candidate.path === '/v1/checkout/sessions')!;
    expect(call.idempotencyKey).toBe(`svc-checkout-${subject.id}`);
    expect(call.form).toMatchObject({ mode: 'payment', client_reference_id: subject.id, line_items: { 0: { quantity: '1', price_data: { currency: 'usd', unit_amount: '900' } } } });
    expect(Number(call.form.expires_at)).toBe(Math.floor(subject.expiresAt.getTime() / 1000));
  });

  it('checkout.session.completed (paid) becomes a paid notice, deduplicated by event id', async () => {
    const subject = order({ currency: 'USD', amountMinor: 1900 });
    const { providerTradeNo } = await stripe.createPayment(subject, { returnUrl: 'https://svc.example/r' });
    const session = fake.complete(providerTradeNo!);
    const delivery = fake.event('checkout.session.completed', session);
    const parsed = await stripe.parseNotification(delivery);
    const eventId = (JSON.parse(delivery.body.toString()) as { id: string }).id;
    expect(parsed).toMatchObject({
      kind: 'notice',
      notice: { provider: 'stripe', orderId: subject.id, providerTradeNo, amountMinor: 1900, currency: 'USD', status: 'paid', eventId, appId: null, merchantId: null },
    });
  });

  it.each([
    ['checkout.session.completed', 'unpaid', 'pending'],
    ['checkout.session.async_payment_succeeded', 'paid', 'paid'],
    ['checkout.session.async_payment_failed', 'unpaid', 'failed'],
    ['checkout.session.expired', 'unpaid', 'failed'],
  ])('%s with payment_status %s counts as %s', async (type, paymentStatus, status) => {
    const session = { id: 'cs_test_x', object: 'checkout.session', client_reference_id: 'svcS1', amount_total: 900, currency: 'usd', payment_status: paymentStatus };
    const parsed = await stripe.parseNotification(fake.event(type, session));
    expect(parsed.kind === 'notice' && parsed.notice.status).toBe(status);
  });

  it('other events are verified and ignored', async () => {
    expect((await stripe.parseNotification(fake.event('payment_intent.succeeded', { id: 'pi_1', object: 'payment_intent' }))).kind).toBe('ignored');
  });

  it('a bad signature, a tampered body and a stale timestamp are refused', async () => {
    const session = { id: 'cs_test_y', object: 'checkout.session', client_reference_id: 'svcS2', amount_total: 900, currency: 'usd', payment_status: 'paid' };
    expect((await rejection(stripe.parseNotification(fake.event('checkout.session.completed', session, { secret: 'whsec_not_ours' })))).reason).toBe('bad_signature');
    const tampered = tamperJson(fake.event('checkout.session.completed', session), (text) => text.replace('"amount_total": 900', '"amount_total": 1'));
    expect((await rejection(stripe.parseNotification(tampered))).reason).toBe('bad_signature');
    const stale = fake.event('checkout.session.completed', session, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect((await rejection(stripe.parseNotification(stale))).reason).toBe('stale_timestamp');
    const noHeader = { ...fake.event('checkout.session.completed', session), headers: {} };
    expect((await rejection(stripe.parseNotification(noHeader))).reason).toBe('malformed');
  });

  it('a pending refund stays pending until Stripe says it succeeded or failed; the refund query follows it', async () => {
    const subject = order({ currency: 'USD', amountMinor: 3900 });
    const { providerTradeNo } = await stripe.createPayment(subject, { returnUrl: 'https://svc.example/r' });
    const withSession = { ...subject, providerTradeNo: providerTradeNo! };
    fake.complete(providerTradeNo!);
    fake.refundStatus = 'pending';
    try {
      const refundId = `${subject.id}R1`;
      const started = await stripe.refund(withSession, { refundId, amountMinor: 3900, reason: 'test' });
      expect(started).toMatchObject({ status: 'pending', providerRefundId: expect.stringMatching(/^re_/) });
      const asked = { refundId, providerRefundId: started.providerRefundId };
      expect(await stripe.queryRefund!(withSession, asked)).toMatchObject({ status: 'pending', orderId: subject.id, refundId, amountMinor: 3900, source: 'query' });
      fake.refunds.get(started.providerRefundId!)!.status = 'succeeded';
      expect(await stripe.queryRefund!(withSession, asked)).toMatchObject({ status: 'succeeded', providerStatus: 'succeeded' });
      fake.refunds.get(started.providerRefundId!)!.status = 'failed';
      expect(await stripe.queryRefund!(withSession, asked)).toMatchObject({ status: 'failed' });
      expect(await stripe.queryRefund!(withSession, { refundId, providerRefundId: 're_unknown' })).toBeNull();
    } finally {
      fake.refundStatus = 'succeeded';
    }
  });

  it('query retrieves the session; close expires it; refund carries an idempotency key', async () => {
    const subject = order({ currency: 'USD', amountMinor: 3900 });
    const { providerTradeNo } = await stripe.createPayment(subject, { returnUrl: 'https://svc.example/r' });
    const withSession = { ...subject, providerTradeNo: providerTradeNo! };
    expect(await stripe.query(withSession)).toMatchObject({ status: 'pending', source: 'query' });
    fake.complete(providerTradeNo!);
    expect(await stripe.query(withSession)).toMatchObject({ status: 'paid', amountMinor: 3900, currency: 'USD' });
    await expect(stripe.close(withSession)).rejects.toThrow(ProviderCallError);
    expect(await stripe.refund(withSession, { refundId: `${subject.id}R1`, amountMinor: 3900, reason: 'test' })).toMatchObject({ status: 'succeeded' });
    expect(await stripe.refund(withSession, { refundId: `${subject.id}R1`, amountMinor: 3900, reason: 'test' })).toMatchObject({ status: 'succeeded' });
    expect([...fake.refunds.values()].filter((refund) => refund.metadata.order_id === subject.id)).toHaveLength(1);
    expect(fake.calls.find((call) => call.path === '/v1/refunds' && call.idempotencyKey === `svc-refund-${subject.id}R1`)).toBeDefined();
    const open = order({ currency: 'USD', amountMinor: 900 });
    const started = await stripe.createPayment(open, { returnUrl: 'https://svc.example/r' });
    await stripe.close({ ...open, providerTradeNo: started.providerTradeNo! });
    expect(await stripe.query({ ...open, providerTradeNo: started.providerTradeNo! })).toMatchObject({ status: 'failed' });
  });
});

describe('sandbox', () => {
  it('its notices verify only on the instance that signed them, and only while fresh', async () => {
    const sandbox = new SandboxProvider({ webUrl: 'https://svc.example' });
    const subject = { id: 'svcX1', amountMinor: 900, currency: 'USD' };
    expect(await sandbox.parseNotification(sandbox.signNotice(subject, 'paid'))).toMatchObject({ kind: 'notice', notice: { orderId: 'svcX1', status: 'paid', amountMinor: 900 } });
    const other = new SandboxProvider({ webUrl: 'https://svc.example' });
    expect((await rejection(sandbox.parseNotification(other.signNotice(subject, 'paid')))).reason).toBe('bad_signature');
    const tampered = tamperJson(sandbox.signNotice(subject, 'paid'), (text) => text.replace('"amountMinor":900', '"amountMinor":1'));
    expect((await rejection(sandbox.parseNotification(tampered))).reason).toBe('bad_signature');
    const old = sandbox.signNotice(subject, 'paid', Date.now() - 301_000);
    expect((await rejection(sandbox.parseNotification({ ...old, receivedAt: Date.now() }))).reason).toBe('stale_timestamp');
  });
});

describe('provider switches', () => {
  it('a provider missing a key is off, names the key, and fails closed', () => {
    const registry = providers({ alipay: { appId: '2021', sellerId: '2088', alipayPublicKey: rsaKeys().publicPem }, stripe: { secretKey: 'env:NOPE_STRIPE', webhookSecret: 'env:NOPE_WHSEC' } }, {});
    expect(registry.status()).toEqual([
      { id: 'alipay', enabled: false, reason: 'payments.alipay.privateKey is missing' },
      { id: 'wechat', enabled: false, reason: 'payments.wechat is not configured' },
      { id: 'stripe', enabled: false, reason: 'payments.stripe.secretKey: environment variable NOPE_STRIPE is not set' },
      { id: 'sandbox', enabled: false, reason: expect.stringContaining('a real payment provider is configured') },
    ]);
    expect(() => registry.require('alipay')).toThrow('payments.alipay.privateKey is missing');
  });

  it('an unreadable key turns the provider off with the key named', () => {
    const registry = providers({ alipay: { appId: '2021', sellerId: '2088', privateKey: 'env:BAD_KEY', alipayPublicKey: rsaKeys().publicPem } }, { BAD_KEY: 'not a key' });
    expect(registry.status()[0]).toEqual({ id: 'alipay', enabled: false, reason: expect.stringContaining('payments.alipay.privateKey is not a readable private key') });
  });
});
