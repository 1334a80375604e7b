import { describe, expect, it } from 'vitest';
import { newOrderId } from '../../../server/modules/billing/billing.service.ts';
import { decideNotice, decideRefund, type OrderFacts, type RefundFacts } from '../../../server/modules/billing/notice-rules.ts';
import type { PaymentNotice, RefundNotice } from '../../../server/modules/billing/providers/provider.ts';

const order: OrderFacts = {
  provider: 'alipay',
  state: 'created',
  amountMinor: 6500,
  currency: 'CNY',
  appId: '2021000000000001',
  merchantId: '2088000000000001',
  providerTradeNo: null,
};

const notice: PaymentNotice = {
  provider: 'alipay',
  orderId: 'svcORDER',
  providerTradeNo: 'T1',
  amountMinor: 6500,
  currency: 'CNY',
  appId: '2021000000000001',
  merchantId: '2088000000000001',
  status: 'paid',
  eventId: 'n1',
  source: 'notify',
  raw: {},
};

describe('what a verified notice may do to an order', () => {
  it.each([
    ['pays a created order', {}, {}, { kind: 'pay' }],
    ['no order', null, {}, { kind: 'reject', reason: 'unknown_order' }],
    ['another provider for the same order number', {}, { provider: 'wechat' }, { kind: 'reject', reason: 'provider_mismatch' }],
    ['another app', {}, { appId: '2021000000000002' }, { kind: 'reject', reason: 'merchant_mismatch' }],
    ['another merchant', {}, { merchantId: '2088000000000002' }, { kind: 'reject', reason: 'merchant_mismatch' }],
    ['no merchant at all', {}, { merchantId: null }, { kind: 'reject', reason: 'merchant_mismatch' }],
    ['one fen less', {}, { amountMinor: 6499 }, { kind: 'reject', reason: 'amount_mismatch' }],
    ['one fen more', {}, { amountMinor: 6501 }, { kind: 'reject', reason: 'amount_mismatch' }],
    ['another currency', {}, { currency: 'USD' }, { kind: 'reject', reason: 'currency_mismatch' }],
    ['a replay on a paid order', { state: 'paid', providerTradeNo: 'T1' }, {}, { kind: 'duplicate' }],
    ['a replay on a refunded order', { state: 'refunded', providerTradeNo: 'T1' }, {}, { kind: 'duplicate' }],
    ['a second trade paying a paid order', { state: 'paid', providerTradeNo: 'T0' }, {}, { kind: 'reject', reason: 'paid_by_other_trade' }],
    ['a session other than the order’s', { providerTradeNo: 'cs_A' }, { providerTradeNo: 'cs_B' }, { kind: 'reject', reason: 'trade_mismatch' }],
    ['money for an expired order', { state: 'expired' }, {}, { kind: 'reject', reason: 'order_not_payable' }],
    ['money for a failed order', { state: 'failed' }, {}, { kind: 'reject', reason: 'order_not_payable' }],
    ['waiting for the payer', {}, { status: 'pending' }, { kind: 'pending' }],
    ['closed unpaid', {}, { status: 'failed' }, { kind: 'fail' }],
    ['closed after it was paid (a refund elsewhere)', { state: 'paid', providerTradeNo: 'T1' }, { status: 'failed' }, { kind: 'ignore' }],
    ['pending after expiry', { state: 'expired' }, { status: 'pending' }, { kind: 'ignore' }],
    ['a replay while its refund is on its way', { state: 'refund_pending', providerTradeNo: 'T1' }, {}, { kind: 'duplicate' }],
    ['a replay after its refund failed', { state: 'refund_failed', providerTradeNo: 'T1' }, {}, { kind: 'duplicate' }],
  ] as const)('%s', (_label, orderChanges, noticeChanges, expected) => {
    const facts = orderChanges === null ? null : { ...order, ...orderChanges };
    expect(decideNotice(facts, { ...notice, ...noticeChanges })).toMatchObject(expected);
  });

  it('checks the provider before anything else, so a foreign notice reveals nothing about the order', () => {
    expect(decideNotice(order, { ...notice, provider: 'stripe', amountMinor: 1, currency: 'USD', appId: null, merchantId: null })).toMatchObject({
      reason: 'provider_mismatch',
    });
  });
});

const refundOrder: RefundFacts = { provider: 'wechat', state: 'refund_pending', amountMinor: 6500, merchantId: '1900000001', refundId: 'svcORDERR1', nextRefundId: 'svcORDERR1' };

const refundNotice: RefundNotice = {
  provider: 'wechat',
  orderId: 'svcORDER',
  refundId: 'svcORDERR1',
  providerRefundId: '5030',
  amountMinor: 6500,
  merchantId: '1900000001',
  status: 'succeeded',
  providerStatus: 'SUCCESS',
  eventId: 'e1',
  source: 'notify',
  raw: {},
};

describe('what a verified refund notice may do to an order', () => {
  it.each([
    ['SUCCESS refunds a pending refund', {}, {}, { kind: 'refunded' }],
    ['CLOSED or ABNORMAL fails a pending refund', {}, { status: 'failed', providerStatus: 'ABNORMAL' }, { kind: 'refund_failed' }],
    ['PROCESSING keeps it pending', {}, { status: 'pending', providerStatus: 'PROCESSING' }, { kind: 'pending' }],
    ['no order', null, {}, { kind: 'reject', reason: 'unknown_order' }],
    ['another provider', {}, { provider: 'stripe', merchantId: null }, { kind: 'reject', reason: 'provider_mismatch' }],
    ['another merchant', {}, { merchantId: '1900000002' }, { kind: 'reject', reason: 'merchant_mismatch' }],
    ['a query answer names no merchant', {}, { merchantId: null, source: 'query' }, { kind: 'refunded' }],
    ['another amount', {}, { amountMinor: 6499 }, { kind: 'reject', reason: 'refund_amount_mismatch' }],
    ['SUCCESS again', { state: 'refunded' }, {}, { kind: 'duplicate' }],
    ['CLOSED after it was refunded', { state: 'refunded' }, { status: 'failed' }, { kind: 'ignore' }],
    ['ABNORMAL again', { state: 'refund_failed', nextRefundId: 'svcORDERR2' }, { status: 'failed' }, { kind: 'duplicate' }],
    ['SUCCESS after ABNORMAL (settled at the provider)', { state: 'refund_failed', nextRefundId: 'svcORDERR2' }, {}, { kind: 'refunded' }],
    ['an older attempt', { refundId: 'svcORDERR2', nextRefundId: 'svcORDERR2' }, {}, { kind: 'ignore' }],
    ['SUCCESS of an attempt whose answer was lost', { state: 'paid', refundId: null }, {}, { kind: 'refunded' }],
    ['ABNORMAL of an attempt whose answer was lost', { state: 'paid', refundId: null }, { status: 'failed' }, { kind: 'ignore' }],
    ['a refund of an order never refunded', { state: 'paid', refundId: null, nextRefundId: 'svcORDERR1' }, { refundId: 'svcORDERR7' }, { kind: 'ignore' }],
    ['a refund of an unpaid order', { state: 'created', refundId: null }, { refundId: 'svcORDERR2' }, { kind: 'ignore' }],
  ] as const)('%s', (_label, orderChanges, noticeChanges, expected) => {
    const facts = orderChanges === null ? null : { ...refundOrder, ...orderChanges };
    expect(decideRefund(facts, { ...refundNotice, ...noticeChanges })).toMatchObject(expected);
  });
});

describe('order ids', () => {
  it('are out_trade_nos both Alipay and WeChat Pay accept, and do not repeat', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = newOrderId();
      expect(id).toMatch(/^svc[A-Za-z0-9]{24}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(5000);
  });

  it('use every character of the alphabet about equally', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) for (const char of newOrderId().slice(3)) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (4000 * 24) / 62;
    for (const count of counts.values()) expect(Math.abs(count - expected)).toBeLessThan(expected * 0.2);
  });
});
